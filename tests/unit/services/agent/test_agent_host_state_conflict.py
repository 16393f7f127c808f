"""A 409 from the host (its update state moved under the agent) means: refresh, decide again."""

from __future__ import annotations

from brupop.domain.host.host import HostUpdateState
from brupop.domain.states import UpdateState
from brupop.ports.errors import HostStateConflictError
from tests.support.agent_rig import make_rig

CONFLICT = HostStateConflictError("prepare-update: not allowed in this state (409)", status=409)


def test_a_409_while_staging_refreshes_once_and_the_step_goes_on() -> None:
    rig = make_rig(current="1.0.0", offered="1.1.0")
    rig.agent.tick()
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")
    rig.host.fail_next["prepare_update"] = CONFLICT

    rig.agent.tick()

    assert rig.host.state is HostUpdateState.READY
    status = rig.store.status
    assert status is not None
    assert (status.current_state, status.crash_count) == (
        UpdateState.STAGED_AND_PERFORMED_UPDATE,
        0,
    )
    staging = rig.host.calls[rig.host.calls.index("prepare_update") :]
    assert staging[:3] == ["prepare_update", "refresh_updates", "prepare_update"]
    assert rig.log.events("update.host_state_changed")


def test_a_second_409_in_the_same_step_fails_it() -> None:
    rig = make_rig(current="1.0.0", offered="1.1.0")
    rig.agent.tick()
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")
    rig.host.fail_always["prepare_update"] = CONFLICT

    rig.agent.tick()

    status = rig.store.status
    assert status is not None
    assert (status.current_state, status.crash_count) == (UpdateState.ERROR_RESET, 1)
    assert rig.host.calls.count("prepare_update") == 2
