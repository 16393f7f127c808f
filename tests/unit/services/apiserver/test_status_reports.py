"""StatusReports: a reported running version must be one the node's shadow already names (the
version it ran, the one its host offered, the one the controller asked for); a first report is
taken as it comes; a failure time later than now or before the Node is refused naming the
field; a report that changes nothing is not written; writes are paced per node; a refusal is
logged once per node."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import structlog.testing

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.shadow import Shadow, ShadowSpec, ShadowStatus, shadow_name
from brupop.domain.states import UpdateState
from brupop.ports.cluster.shadow_repository import ShadowRepository
from brupop.services.apiserver.shadow_feed import ShadowFeed
from brupop.services.apiserver.status_reports import (
    ReportOutOfBoundsError,
    ReportsTooFrequentError,
    StatusPacing,
    StatusReports,
    VersionNotOfferedError,
)
from tests.fakes.clock import FakeClock

NAME = shadow_name("n1")
NOW = datetime(2026, 1, 5, 10, tzinfo=UTC)
NODE_CREATED = NOW - timedelta(days=3)


def _status(
    current: str, target: str = "1.20.0", *, failed_at: datetime | None = None
) -> ShadowStatus:
    return ShadowStatus(
        current_version=current,
        target_version=target,
        current_state=UpdateState.IDLE,
        crash_count=1 if failed_at else 0,
        state_transition_failure_timestamp=failed_at,
    )


def _cluster(clock: FakeClock) -> InMemoryCluster:
    cluster = InMemoryCluster(clock=clock)
    node = cluster.add_node("n1", created_at=NODE_CREATED)
    cluster.shadows.create("n1", node.uid)
    return cluster


def _reports(
    feed: type[ShadowFeed] | None = None, pacing: StatusPacing | None = None
) -> tuple[InMemoryCluster, StatusReports]:
    clock = FakeClock(NOW)
    cluster = _cluster(clock)
    shared = feed(cluster.shadows) if feed is not None else ShadowFeed(cluster.shadows)
    return cluster, StatusReports(cluster.shadows, shared, cluster.nodes, clock, pacing)


class CurrentFeed(ShadowFeed):
    """A watch that is never behind: it shows the stored shadow."""

    def __init__(self, shadows: ShadowRepository) -> None:
        super().__init__(shadows)
        self._stored = shadows

    def latest(self, name: str) -> Shadow | None:
        return self._stored.get(name)


def test_a_first_report_is_taken_as_it_comes() -> None:
    cluster, reports = _reports()
    reports.write(NAME, "n1", _status("1.19.0"))
    stored = cluster.shadows.get(NAME).status
    assert stored is not None and stored.current_version == "1.19.0"


@pytest.mark.parametrize("current", ["1.19.0", "1.20.0"], ids=["the one it ran", "offered"])
def test_the_version_it_ran_or_the_one_its_host_offered_is_taken(current: str) -> None:
    cluster, reports = _reports()
    reports.write(NAME, "n1", _status("1.19.0", target="1.20.0"))
    reports.write(NAME, "n1", _status(current, target=current))
    stored = cluster.shadows.get(NAME).status
    assert stored is not None and stored.current_version == current


def test_the_version_the_controller_asked_for_is_taken() -> None:
    cluster, reports = _reports()
    reports.write(NAME, "n1", _status("1.19.0", target="1.19.0"))
    spec = ShadowSpec(state=UpdateState.REBOOTED_INTO_UPDATE, version="1.20.0")
    cluster.shadows.replace_spec(NAME, spec, None)
    reports.write(NAME, "n1", _status("1.20.0"))
    stored = cluster.shadows.get(NAME).status
    assert stored is not None and stored.current_version == "1.20.0"


def test_a_version_no_host_offered_is_refused_and_the_stored_status_stays() -> None:
    cluster, reports = _reports()
    reports.write(NAME, "n1", _status("1.19.0"))
    with pytest.raises(VersionNotOfferedError, match=r"9\.9\.9 was never offered"):
        reports.write(NAME, "n1", _status("9.9.9", target="9.9.9"))
    stored = cluster.shadows.get(NAME).status
    assert stored is not None and stored.current_version == "1.19.0"


def test_a_node_refused_again_and_again_is_logged_once_until_its_report_is_taken() -> None:
    _, reports = _reports()
    reports.write(NAME, "n1", _status("1.19.0"))
    with structlog.testing.capture_logs() as logs:
        for _ in range(5):
            with pytest.raises(VersionNotOfferedError):
                reports.write(NAME, "n1", _status("9.9.9"))
        reports.write(NAME, "n1", _status("1.19.0"))
        with pytest.raises(VersionNotOfferedError):
            reports.write(NAME, "n1", _status("9.9.9"))
    refused = [line for line in logs if line["event"] == "status.refused"]
    assert len(refused) == 2
    assert refused[0]["shadow"] == NAME and refused[0]["log_level"] == "warning"


class LaggingFeed(ShadowFeed):
    """A watch that still shows the shadow as it was created (no status yet)."""

    def __init__(self, cluster: InMemoryCluster) -> None:
        super().__init__(cluster.shadows)
        self._first = cluster.shadows.get(NAME)

    def latest(self, name: str) -> Shadow | None:
        return self._first if name == NAME else None


def test_a_watch_that_lags_behind_the_first_report_does_not_let_any_version_through() -> None:
    clock = FakeClock(NOW)
    cluster = _cluster(clock)
    reports = StatusReports(cluster.shadows, LaggingFeed(cluster), cluster.nodes, clock)
    reports.write(NAME, "n1", _status("1.19.0"))
    with pytest.raises(VersionNotOfferedError):
        reports.write(NAME, "n1", _status("9.9.9"))


@pytest.mark.parametrize(
    "failed_at",
    [datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC), NOW + timedelta(hours=1)],
    ids=["end of the calendar", "an hour ahead"],
)
def test_a_failure_later_than_now_is_refused_naming_the_field(failed_at: datetime) -> None:
    cluster, reports = _reports()
    reports.write(NAME, "n1", _status("1.19.0"))
    with pytest.raises(ReportOutOfBoundsError, match="is later than now") as refused:
        reports.write(NAME, "n1", _status("1.19.0", failed_at=failed_at))
    assert refused.value.field == "state_transition_failure_timestamp"
    stored = cluster.shadows.get(NAME).status
    assert stored is not None and stored.state_transition_failure_timestamp is None


def test_a_failure_before_the_node_was_created_is_refused() -> None:
    _, reports = _reports()
    with pytest.raises(ReportOutOfBoundsError, match="before the Node was created"):
        reports.write(NAME, "n1", _status("1.19.0", failed_at=NODE_CREATED - timedelta(days=1)))


def test_a_failure_a_minute_ago_is_taken() -> None:
    cluster, reports = _reports()
    reports.write(NAME, "n1", _status("1.19.0", failed_at=NOW - timedelta(minutes=1)))
    stored = cluster.shadows.get(NAME).status
    assert stored is not None and stored.crash_count == 1


def test_a_report_that_changes_nothing_is_answered_without_a_write() -> None:
    cluster, reports = _reports(CurrentFeed)
    first = reports.write(NAME, "n1", _status("1.19.0"))
    again = reports.write(NAME, "n1", _status("1.19.0"))
    assert again.resource_version == first.resource_version
    assert cluster.shadows.get(NAME).resource_version == first.resource_version


def test_writes_past_the_nodes_burst_are_refused_until_its_pace_allows_one_more() -> None:
    clock = FakeClock(NOW)
    cluster = _cluster(clock)
    reports = StatusReports(
        cluster.shadows, ShadowFeed(cluster.shadows), cluster.nodes, clock, StatusPacing(1.0, 3)
    )
    for offered in ("1.20.0", "1.21.0", "1.22.0"):
        reports.write(NAME, "n1", _status("1.19.0", target=offered))
    with pytest.raises(ReportsTooFrequentError):
        reports.write(NAME, "n1", _status("1.19.0", target="1.23.0"))
    clock.advance(1.0)
    reports.write(NAME, "n1", _status("1.19.0", target="1.23.0"))
