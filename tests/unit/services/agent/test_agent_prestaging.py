"""Between turns the agent prepares ahead what the spec names, without cordon or drain; a spec
sent back to Idle, or naming no preparation, takes back an activation that was not rebooted."""

from __future__ import annotations

from dataclasses import replace

from brupop.domain.host.agent_shadow import AgentShadowSpec
from brupop.domain.host.host import HostUpdateState, HostUpdateStatus
from brupop.domain.states import UpdateState
from brupop.services.agent.outcomes import Next
from tests.fakes.shadow_store import InMemoryShadowStore
from tests.fakes.update_api import FakeUpdateApi
from tests.support.agent_rig import AgentRig, make_rig


def _idle_rig() -> AgentRig:
    rig = make_rig(current="1.0.0", offered="1.1.0")
    rig.agent.tick()
    rig.host.calls.clear()
    return rig


def _host_state(rig: AgentRig) -> HostUpdateState:
    return rig.host.state


def _ask_prestage(rig: AgentRig, version: str | None) -> None:
    shadow = rig.store.shadow
    assert shadow is not None
    rig.store.put(replace(shadow.spec, prestage_version=version), shadow.status)


def test_an_idle_node_asked_to_prestage_prepares_without_activating_or_cordoning() -> None:
    rig = _idle_rig()
    _ask_prestage(rig, "1.1.0")

    assert rig.agent.tick() is Next.WAIT_FOR_CHANGE

    assert rig.host.state is HostUpdateState.STAGED
    assert "activate_update" not in rig.host.calls
    assert rig.node.calls == []
    status = rig.store.status
    assert status is not None and status.current_state is UpdateState.IDLE
    assert (status.staged_version, status.staged_state) == ("1.1.0", "Staged")


def test_a_prestaged_node_is_not_asked_to_prepare_again_on_the_next_tick() -> None:
    rig = _idle_rig()
    _ask_prestage(rig, "1.1.0")
    rig.agent.tick()
    assert rig.host.state is HostUpdateState.STAGED
    rig.host.calls.clear()

    rig.agent.tick()

    assert "prepare_update" not in rig.host.calls
    assert "update_status" not in rig.host.calls


def test_a_prestaged_node_in_its_turn_only_activates() -> None:
    rig = _idle_rig()
    _ask_prestage(rig, "1.1.0")
    rig.agent.tick()
    rig.host.calls.clear()
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")

    rig.agent.tick()

    commands = [c for c in rig.host.calls if c.endswith("_update") or c == "refresh_updates"]
    assert commands == ["activate_update"]
    status = rig.store.status
    assert status is not None and status.staged_state == "Ready"


def test_a_failed_preparation_ahead_is_logged_once_and_counts_no_crash() -> None:
    rig = _idle_rig()
    rig.host.failing_commands.add("prepare_update")
    _ask_prestage(rig, "1.1.0")

    rig.agent.tick()
    rig.agent.tick()

    assert rig.host.calls.count("prepare_update") == 1
    (warning,) = rig.log.at("warning")
    assert warning.event == "update.prestage_failed"
    status = rig.store.status
    assert status is not None and status.crash_count == 0
    assert status.current_state is UpdateState.IDLE


def test_a_node_sent_back_to_idle_after_activating_deactivates_and_says_so() -> None:
    rig = _idle_rig()
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")
    rig.agent.tick()
    assert _host_state(rig) is HostUpdateState.READY

    rig.store.set_spec(UpdateState.IDLE)  # halted, paused or pinned below before its reboot
    rig.agent.tick()

    assert rig.host.state is HostUpdateState.STAGED
    assert rig.host.reboots == 0
    status = rig.store.status
    assert status is not None and (status.staged_version, status.staged_state) == (
        "1.1.0",
        "Staged",
    )
    assert len(rig.log.events("update.unstaged")) == 1


def test_an_idle_node_reported_ready_with_no_prestage_asked_deactivates() -> None:
    rig = _idle_rig()
    rig.host.refresh_updates()
    rig.host.prepare_update()
    rig.host.activate_update()
    shadow = rig.store.shadow
    assert shadow is not None and shadow.status is not None
    ready = replace(shadow.status, staged_version="1.1.0", staged_state="Ready")
    rig.store.put(AgentShadowSpec(), ready)

    rig.agent.tick()

    assert rig.host.state is HostUpdateState.STAGED
    status = rig.store.status
    assert status is not None and status.staged_state == "Staged"


def test_a_node_that_rebooted_into_its_staged_version_reports_nothing_staged() -> None:
    rig = _idle_rig()
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")
    rig.agent.tick()
    rig.host.reboot()  # the host now runs 1.1.0

    rig.store.set_spec(UpdateState.REBOOTED_INTO_UPDATE, "1.1.0")
    rig.agent.tick()

    status = rig.store.status
    assert status is not None and status.current_version == "1.1.0"
    assert (status.staged_version, status.staged_state) == (None, None)


class _WithdrawnWhileActivating(FakeUpdateApi):
    """A host whose activation ends after the controller sent the node back to Idle."""

    store: InMemoryShadowStore | None = None

    def activate_update(self) -> HostUpdateStatus:
        activated = super().activate_update()
        if self.store is not None:
            self.store.set_spec(UpdateState.IDLE)  # the fleet paused meanwhile
        return activated


def test_a_turn_withdrawn_while_staging_leaves_the_host_deactivated() -> None:
    host = _WithdrawnWhileActivating("1.0.0", "1.1.0")
    rig = make_rig(host=host)
    host.store = rig.store
    rig.agent.tick()
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")

    rig.agent.tick()

    assert rig.log.events("update.withdrawn")
    assert _host_state(rig) is HostUpdateState.STAGED
    rig.agent.tick()
    status = rig.store.status
    assert status is not None and status.staged_state == "Staged"
