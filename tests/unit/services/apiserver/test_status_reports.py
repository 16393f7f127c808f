"""StatusReports: a reported running version must be one the node's shadow already names (the
version it ran, the one its host offered, the one the controller asked for); a first report is
taken as it comes; a refusal is logged once per node."""

from __future__ import annotations

import pytest
import structlog.testing

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.shadow import Shadow, ShadowSpec, ShadowStatus, shadow_name
from brupop.domain.states import UpdateState
from brupop.services.apiserver.shadow_feed import ShadowFeed
from brupop.services.apiserver.status_reports import StatusReports, VersionNotOfferedError

NAME = shadow_name("n1")


def _status(current: str, target: str = "1.20.0") -> ShadowStatus:
    return ShadowStatus(
        current_version=current, target_version=target, current_state=UpdateState.IDLE
    )


def _reports() -> tuple[InMemoryCluster, StatusReports]:
    cluster = InMemoryCluster()
    node = cluster.add_node("n1")
    cluster.shadows.create("n1", node.uid)
    return cluster, StatusReports(cluster.shadows, ShadowFeed(cluster.shadows))


def test_a_first_report_is_taken_as_it_comes() -> None:
    cluster, reports = _reports()
    reports.write(NAME, _status("1.19.0"))
    stored = cluster.shadows.get(NAME).status
    assert stored is not None and stored.current_version == "1.19.0"


@pytest.mark.parametrize("current", ["1.19.0", "1.20.0"], ids=["the one it ran", "offered"])
def test_the_version_it_ran_or_the_one_its_host_offered_is_taken(current: str) -> None:
    cluster, reports = _reports()
    reports.write(NAME, _status("1.19.0", target="1.20.0"))
    reports.write(NAME, _status(current, target=current))
    stored = cluster.shadows.get(NAME).status
    assert stored is not None and stored.current_version == current


def test_the_version_the_controller_asked_for_is_taken() -> None:
    cluster, reports = _reports()
    reports.write(NAME, _status("1.19.0", target="1.19.0"))
    spec = ShadowSpec(state=UpdateState.REBOOTED_INTO_UPDATE, version="1.20.0")
    cluster.shadows.replace_spec(NAME, spec, None)
    reports.write(NAME, _status("1.20.0"))
    stored = cluster.shadows.get(NAME).status
    assert stored is not None and stored.current_version == "1.20.0"


def test_a_version_no_host_offered_is_refused_and_the_stored_status_stays() -> None:
    cluster, reports = _reports()
    reports.write(NAME, _status("1.19.0"))
    with pytest.raises(VersionNotOfferedError, match=r"9\.9\.9 was never offered"):
        reports.write(NAME, _status("9.9.9", target="9.9.9"))
    stored = cluster.shadows.get(NAME).status
    assert stored is not None and stored.current_version == "1.19.0"


def test_a_node_refused_again_and_again_is_logged_once_until_its_report_is_taken() -> None:
    _, reports = _reports()
    reports.write(NAME, _status("1.19.0"))
    with structlog.testing.capture_logs() as logs:
        for _ in range(5):
            with pytest.raises(VersionNotOfferedError):
                reports.write(NAME, _status("9.9.9"))
        reports.write(NAME, _status("1.19.0"))
        with pytest.raises(VersionNotOfferedError):
            reports.write(NAME, _status("9.9.9"))
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
    cluster, _ = _reports()
    reports = StatusReports(cluster.shadows, LaggingFeed(cluster))
    reports.write(NAME, _status("1.19.0"))
    with pytest.raises(VersionNotOfferedError):
        reports.write(NAME, _status("9.9.9"))
