"""One node cannot hurt the fleet: whatever one shadow's status holds (any JSON the CRD
admits), the controller's pass goes on for the others and decides them as it would without it;
the shadow it cannot judge is quarantined with a reason, an Event and the waiting metric."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brupop.domain.shadow import CRASH_COUNT_MAX, ShadowStatus, shadow_name
from brupop.domain.states import UpdateState
from brupop.domain.timestamps import format_rfc3339
from brupop.domain.versions import SEMVER_PATTERN
from brupop.entrypoints.controller.http_server import status_document
from tests.unit.services.controller.fleet import NEW, OLD, Fleet, RecordingMetrics

END_OF_CALENDAR = "9999-12-31T23:59:59Z"


def _hostile_status(failed_at: str = END_OF_CALENDAR) -> ShadowStatus:
    return ShadowStatus.model_validate(
        {
            "current_version": OLD,
            "target_version": NEW,
            "current_state": "Idle",
            "crash_count": 1,
            "state_transition_failure_timestamp": failed_at,
        }
    )


def test_a_failure_stamped_at_the_end_of_the_calendar_stops_no_other_node() -> None:
    fleet = Fleet(3)
    fleet.cluster.shadows.update_status(shadow_name("node-00"), _hostile_status())
    metrics = RecordingMetrics()
    controller = fleet.controller(3, metrics=metrics)

    controller.tick()

    assert fleet.specs() == {
        "node-00": UpdateState.IDLE,
        "node-01": UpdateState.STAGED_AND_PERFORMED_UPDATE,
        "node-02": UpdateState.STAGED_AND_PERFORMED_UPDATE,
    }
    assert metrics.pass_failures == 0
    assert metrics.waiting["quarantined"] == 1


def test_the_quarantined_node_has_a_readable_reason_an_event_and_a_status_document() -> None:
    fleet = Fleet(2)
    fleet.cluster.shadows.update_status(shadow_name("node-00"), _hostile_status())
    controller = fleet.controller(2)

    controller.tick()

    row = next(r for r in controller.reports() if r.node == "node-00")
    assert row.reason.value == "quarantined"
    assert "state_transition_failure_timestamp 9999-12-31T23:59:59+00:00" in row.detail
    events = [e for e in fleet.cluster.events.recorded if e.reason == "ShadowQuarantined"]
    assert [e.shadow_name for e in events] == [shadow_name("node-00")]
    controller.tick()  # told once, not every pass
    assert len([e for e in fleet.cluster.events.recorded if e.reason == "ShadowQuarantined"]) == 1
    json.dumps(status_document(controller))


_INSTANTS = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
).map(format_rfc3339)


@st.composite
def _crd_statuses(draw: st.DrawFn) -> dict[str, Any]:
    """Any status the CRD's schema admits: versions by its pattern, any state, any count in
    its bounds, any instant or none."""
    version = st.from_regex(SEMVER_PATTERN, fullmatch=True).filter(lambda v: len(v) < 64)
    return {
        "current_version": draw(version),
        "target_version": draw(version),
        "current_state": draw(st.sampled_from([s.value for s in UpdateState])),
        "crash_count": draw(st.integers(min_value=0, max_value=CRASH_COUNT_MAX)),
        "state_transition_failure_timestamp": draw(st.none() | _INSTANTS),
    }


def _others_after_one_pass(hostile: dict[str, Any] | None) -> dict[str, UpdateState]:
    fleet = Fleet(4)
    if hostile is not None:
        fleet.cluster.shadows.update_status(
            shadow_name("node-00"), ShadowStatus.model_validate(hostile)
        )
    fleet.controller(None).tick()
    return {node: spec for node, spec in fleet.specs().items() if node != "node-00"}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile=_crd_statuses())
def test_any_status_in_one_shadow_leaves_the_other_nodes_decisions_as_they_were(
    hostile: dict[str, Any],
) -> None:
    assert _others_after_one_pass(hostile) == _others_after_one_pass(None)
