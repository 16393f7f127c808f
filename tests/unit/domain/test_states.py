"""The v2 state machine: order of states and per-state timeouts."""

import pytest

from brupop.domain.states import StateTimeouts, UpdateState


@pytest.mark.parametrize(
    ("state", "next_state"),
    [
        (UpdateState.IDLE, UpdateState.STAGED_AND_PERFORMED_UPDATE),
        (UpdateState.STAGED_AND_PERFORMED_UPDATE, UpdateState.REBOOTED_INTO_UPDATE),
        (UpdateState.REBOOTED_INTO_UPDATE, UpdateState.MONITORING_UPDATE),
        (UpdateState.MONITORING_UPDATE, UpdateState.IDLE),
        (UpdateState.ERROR_RESET, UpdateState.IDLE),
    ],
    ids=lambda s: s.value,
)
def test_each_state_leads_to_the_next_on_success(
    state: UpdateState, next_state: UpdateState
) -> None:
    assert state.on_success() is next_state


def test_wire_values_are_the_crd_v2_enum() -> None:
    assert [s.value for s in UpdateState] == [
        "Idle",
        "StagedAndPerformedUpdate",
        "RebootedIntoUpdate",
        "MonitoringUpdate",
        "ErrorReset",
    ]


@pytest.mark.parametrize(
    ("state", "seconds"),
    [
        (UpdateState.IDLE, 120.0),
        (UpdateState.STAGED_AND_PERFORMED_UPDATE, 720.0),
        (UpdateState.REBOOTED_INTO_UPDATE, 600.0),
        (UpdateState.MONITORING_UPDATE, 300.0),
        (UpdateState.ERROR_RESET, None),
    ],
    ids=lambda s: getattr(s, "value", str(s)),
)
def test_default_timeouts_are_the_originals(state: UpdateState, seconds: float | None) -> None:
    assert StateTimeouts().for_state(state) == seconds


def test_timeouts_are_settable_per_state() -> None:
    timeouts = StateTimeouts(rebooted_into_update=30.0)
    assert timeouts.for_state(UpdateState.REBOOTED_INTO_UPDATE) == 30.0
    assert timeouts.for_state(UpdateState.MONITORING_UPDATE) == 300.0
