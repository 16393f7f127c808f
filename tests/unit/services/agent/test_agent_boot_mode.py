"""The agent reports its host's boot mode (FIPS or not) and fails an update that changed it:
the node stays cordoned and its status names the mode it ran before."""

from __future__ import annotations

from brupop.domain.boot_mode import BootMode
from brupop.domain.host.agent_shadow import AgentShadowStatus
from brupop.domain.states import UpdateState
from brupop.services.agent.agent import NodeAgent
from brupop.services.agent.config import AgentConfig
from brupop.services.agent.outcomes import AgentExit, ExitKind, Next
from brupop.services.agent.stop import StopFlag
from tests.fakes.update_api import FakeUpdateApi
from tests.support.agent_rig import AgentRig, make_rig


def _status(rig: AgentRig) -> AgentShadowStatus:
    assert rig.store.status is not None
    return rig.store.status


def _rebooted_into_the_update(kind: str) -> tuple[AgentRig, NodeAgent]:
    """A rig whose agent staged 1.1.0 and rebooted into it, and the agent started after."""
    rig = make_rig(host=FakeUpdateApi("1.0.0", "1.1.0", kind=kind))
    rig.agent.tick()
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")
    rig.agent.tick()
    rig.host.reboot_kills_apiclient = True
    rig.store.set_spec(UpdateState.REBOOTED_INTO_UPDATE, "1.1.0")
    assert rig.agent.tick() == AgentExit(ExitKind.REBOOTING)
    after = NodeAgent(
        rig.host, rig.store, rig.node, rig.clock, AgentConfig(), stop=StopFlag(), log=rig.log
    )
    return rig, after


def test_a_standard_host_reports_the_standard_mode_and_no_change() -> None:
    rig = make_rig()

    rig.agent.tick()

    assert _status(rig).boot_mode is BootMode.STANDARD
    assert _status(rig).boot_mode_changed_from is None


def test_a_fips_host_that_keeps_its_mode_finishes_its_update_uncordoned() -> None:
    rig, after = _rebooted_into_the_update("fips")

    assert after.tick() is Next.WAIT_FOR_CHANGE

    status = _status(rig)
    assert status.current_state is UpdateState.REBOOTED_INTO_UPDATE
    assert (status.boot_mode, status.boot_mode_changed_from) == (BootMode.FIPS, None)
    assert not rig.node.cordoned


def test_an_update_that_lost_fips_fails_after_the_reboot_and_the_node_stays_cordoned() -> None:
    rig, after = _rebooted_into_the_update("fips-lost")

    assert after.tick() is Next.RETRY_LATER

    status = _status(rig)
    assert status.current_state is UpdateState.ERROR_RESET
    assert (status.boot_mode, status.boot_mode_changed_from) == (
        BootMode.STANDARD,
        BootMode.FIPS,
    )
    assert rig.node.cordoned
    (failed,) = rig.log.events("update.step_failed")
    assert failed.fields["error"] == "BootModeChangedError"
    assert "standard mode" in failed.fields["reason"]


def test_a_node_whose_mode_changed_is_left_cordoned_when_sent_back_to_idle() -> None:
    rig, after = _rebooted_into_the_update("fips-lost")
    after.tick()
    rig.store.set_spec(UpdateState.IDLE, "1.1.0")

    after.tick()
    rig.clock.advance(300)
    after.tick()

    status = _status(rig)
    assert status.current_state is UpdateState.IDLE
    assert status.boot_mode_changed_from is BootMode.FIPS
    assert rig.node.cordoned
    assert len(rig.log.events("node.left_cordoned")) == 1
