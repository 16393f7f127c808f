"""A step the controller withdraws while it runs (a transition timeout) is not carried on."""

from __future__ import annotations

from dataclasses import replace

from brupop.domain.host.agent_shadow import AgentShadowStatus
from brupop.domain.host.host import HostUpdateStatus
from brupop.domain.states import UpdateState
from brupop.services.agent.config import AgentConfig
from brupop.services.agent.outcomes import Next
from tests.support.agent_rig import AgentRig, make_rig


def _staged_rig() -> AgentRig:
    """An agent whose host is Ready for 1.1.0 and whose status says StagedAndPerformedUpdate."""
    rig = make_rig(current="1.0.0", offered="1.1.0", config=AgentConfig(reboot_wait_seconds=0))
    rig.agent.tick()
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")
    rig.agent.tick()
    rig.store.set_spec(UpdateState.REBOOTED_INTO_UPDATE, "1.1.0")
    return rig


def _controller_times_out(rig: AgentRig) -> AgentShadowStatus:
    """What the controller does on a timeout: one more crash in the status, spec back to Idle."""
    status = rig.store.status
    assert status is not None
    raised = replace(status, crash_count=status.crash_count + 1)
    rig.store.put(spec=rig.store.shadow.spec if rig.store.shadow else None, status=raised)
    rig.store.set_spec(UpdateState.IDLE, "1.1.0")
    return raised


def _time_out_during_drain(rig: AgentRig) -> None:
    def on_call(call: str) -> None:
        if call == "cordon_and_drain":
            _controller_times_out(rig)

    rig.node.on_call = on_call


def test_agent_does_not_reboot_when_the_reboot_was_withdrawn_during_the_drain() -> None:
    rig = _staged_rig()
    _time_out_during_drain(rig)

    assert rig.agent.tick() is Next.WAIT_FOR_CHANGE

    assert rig.host.reboots == 0
    assert rig.log.events("update.withdrawn")
    assert rig.log.at("warning") == []


def test_withdrawn_node_is_uncordoned_on_the_next_tick_and_keeps_the_controllers_crash() -> None:
    rig = _staged_rig()
    _time_out_during_drain(rig)
    rig.agent.tick()
    rig.node.on_call = None

    rig.agent.tick()

    assert not rig.node.cordoned
    assert rig.store.status is not None
    assert rig.store.status.current_state is UpdateState.IDLE
    assert rig.store.status.crash_count == 1


def test_a_staging_result_is_not_reported_over_a_timeout_that_happened_meanwhile() -> None:
    rig = make_rig(current="1.0.0", offered="1.1.0")
    rig.agent.tick()
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")
    original_activate = rig.host.activate_update

    def activate_slowly() -> HostUpdateStatus:
        result = original_activate()
        _controller_times_out(rig)
        return result

    rig.host.activate_update = activate_slowly  # type: ignore[method-assign]

    rig.agent.tick()

    assert rig.store.status is not None
    assert rig.store.status.current_state is UpdateState.IDLE
    assert rig.store.status.crash_count == 1
