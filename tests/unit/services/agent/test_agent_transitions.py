"""Each spec state the controller asks for, and what the agent does on its host and node."""

from __future__ import annotations

from brupop.domain.host.host import HostUpdateState
from brupop.domain.states import UpdateState
from brupop.services.agent.config import AgentConfig
from brupop.services.agent.outcomes import AgentExit, ExitKind, Next
from tests.support.agent_rig import AgentRig, make_rig

UPDATE_COMMANDS = ("refresh_updates", "prepare_update", "activate_update", "deactivate_update")


def _ready_rig(
    current: str = "1.0.0", offered: str | None = "1.1.0", config: AgentConfig | None = None
) -> AgentRig:
    """A rig whose agent has reported Idle once (shadow and status exist)."""
    rig = make_rig(current=current, offered=offered, config=config)
    rig.agent.tick()
    rig.host.calls.clear()
    return rig


def _stage_host(rig: AgentRig, version: str) -> None:
    rig.host.offer(version)
    rig.host.refresh_updates()
    rig.host.prepare_update()


def _update_commands(rig: AgentRig) -> list[str]:
    return [call for call in rig.host.calls if call in UPDATE_COMMANDS]


def _state(rig: AgentRig) -> UpdateState:
    assert rig.store.status is not None
    return rig.store.status.current_state


def test_staged_and_performed_update_prepares_and_activates_the_pinned_version() -> None:
    rig = _ready_rig(current="1.0.0", offered="1.1.0")
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")

    assert rig.agent.tick() is Next.WAIT_FOR_CHANGE

    assert _update_commands(rig) == ["refresh_updates", "prepare_update", "activate_update"]
    assert rig.host.state is HostUpdateState.READY
    assert _state(rig) is UpdateState.STAGED_AND_PERFORMED_UPDATE
    assert rig.node.calls == []  # no cordon or drain before the reboot step


def test_staging_refreshes_first_and_a_failed_refresh_is_a_failed_step() -> None:
    rig = _ready_rig(current="1.0.0", offered="1.1.0")
    rig.host.failing_commands.add("refresh_updates")
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")

    assert rig.agent.tick() is Next.RETRY_LATER

    assert _update_commands(rig) == ["refresh_updates"]
    assert rig.store.status is not None and rig.store.status.crash_count == 1
    assert _state(rig) is UpdateState.ERROR_RESET
    (warning,) = rig.log.at("warning")
    assert warning.event == "update.step_failed"
    assert warning.fields["error"] == "HostCommandFailedError"


def test_staging_refuses_a_newer_release_offered_since_the_update_check() -> None:
    rig = _ready_rig(current="1.0.0", offered="1.1.0")  # the update check chose 1.1.0
    rig.host.offer("1.2.0")
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")

    assert rig.agent.tick() is Next.RETRY_LATER

    # Without the refresh, prepare would download whatever the host now chooses.
    assert _update_commands(rig) == ["refresh_updates"]
    assert _state(rig) is UpdateState.ERROR_RESET
    (warning,) = rig.log.at("warning")
    assert warning.fields["error"] == "VersionMismatchError"
    assert "1.2.0" in warning.fields["reason"] and "1.1.0" in warning.fields["reason"]


def test_staging_refuses_a_host_that_chose_another_version_and_names_both() -> None:
    rig = _ready_rig(current="1.0.0", offered="1.2.0")
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")

    assert rig.agent.tick() is Next.RETRY_LATER

    assert "prepare_update" not in rig.host.calls
    assert _state(rig) is UpdateState.ERROR_RESET
    (warning,) = rig.log.at("warning")
    assert warning.fields["error"] == "VersionMismatchError"
    assert "1.2.0" in warning.fields["reason"] and "1.1.0" in warning.fields["reason"]


def test_staging_skips_prepare_and_activate_when_the_host_is_already_ready_for_it() -> None:
    rig = _ready_rig(current="1.0.0", offered="1.1.0")
    _stage_host(rig, "1.1.0")
    rig.host.activate_update()
    rig.host.calls.clear()
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")

    rig.agent.tick()

    assert _update_commands(rig) == []
    assert _state(rig) is UpdateState.STAGED_AND_PERFORMED_UPDATE


def test_staging_only_activates_when_the_host_already_staged_that_version() -> None:
    rig = _ready_rig(current="1.0.0", offered="1.1.0")
    _stage_host(rig, "1.1.0")
    rig.host.calls.clear()
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")

    rig.agent.tick()

    assert _update_commands(rig) == ["activate_update"]
    assert rig.host.state is HostUpdateState.READY


def test_staging_refreshes_then_deactivates_when_the_host_is_ready_for_another_version() -> None:
    rig = _ready_rig(current="1.0.0", offered="1.1.0")
    _stage_host(rig, "1.1.0")
    rig.host.activate_update()
    rig.host.offer("1.2.0")
    rig.host.calls.clear()
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.2.0")

    rig.agent.tick()

    # A real host sees the new offer only after a refresh, so the agent refreshes first.
    assert _update_commands(rig) == [
        "refresh_updates",
        "deactivate_update",
        "prepare_update",
        "activate_update",
    ]
    status = rig.host.update_status()
    assert status is not None and status.staging_partition is not None
    assert status.staging_partition.image is not None
    assert status.staging_partition.image.version == "1.2.0"
    assert _state(rig) is UpdateState.STAGED_AND_PERFORMED_UPDATE


def test_rebooted_into_update_drains_checks_ready_and_reboots_once() -> None:
    rig = _ready_rig(current="1.0.0", offered="1.1.0")
    _stage_host(rig, "1.1.0")
    rig.host.activate_update()
    rig.host.reboot_kills_apiclient = True
    rig.store.set_spec(UpdateState.REBOOTED_INTO_UPDATE, "1.1.0")

    outcome = rig.agent.tick()

    assert outcome == AgentExit(ExitKind.REBOOTING)
    assert rig.node.calls == ["cordon_and_drain"]
    assert rig.host.reboots == 1 and rig.host.current_version == "1.1.0"
    (line,) = rig.log.events("node.rebooting_into_update")
    assert line.level == "info" and line.fields["version"] == "1.1.0"
    assert line.fields["apiclient"] == "killed by SIGTERM"
    assert rig.log.at("warning") == [] and rig.log.at("error") == []


def test_reboot_that_returns_waits_for_the_shutdown_then_ends_rebooting() -> None:
    rig = _ready_rig(config=AgentConfig(reboot_wait_seconds=180))
    _stage_host(rig, "1.1.0")
    rig.host.activate_update()
    rig.store.set_spec(UpdateState.REBOOTED_INTO_UPDATE, "1.1.0")
    before = rig.clock.monotonic()

    assert rig.agent.tick() == AgentExit(ExitKind.REBOOTING)

    assert rig.clock.monotonic() - before == 180
    assert len(rig.log.events("node.rebooting_into_update")) == 1


def test_reboot_leaves_the_load_balancers_and_waits_before_draining_when_configured() -> None:
    rig = _ready_rig(config=AgentConfig(exclude_from_lb_wait_seconds=30, reboot_wait_seconds=0))
    _stage_host(rig, "1.1.0")
    rig.host.activate_update()
    rig.store.set_spec(UpdateState.REBOOTED_INTO_UPDATE, "1.1.0")
    drained_at: list[float] = []
    rig.node.on_call = lambda call: drained_at.append(rig.clock.monotonic())
    start = rig.clock.monotonic()

    rig.agent.tick()

    assert rig.node.calls == ["exclude_from_load_balancers", "cordon_and_drain"]
    assert drained_at[1] - start == 30


def test_reboot_is_refused_without_draining_when_the_host_is_not_ready() -> None:
    rig = _ready_rig()
    rig.store.set_spec(UpdateState.REBOOTED_INTO_UPDATE, "1.1.0")

    assert rig.agent.tick() is Next.RETRY_LATER

    assert rig.node.calls == [] and rig.host.reboots == 0
    assert _state(rig) is UpdateState.ERROR_RESET
    (warning,) = rig.log.at("warning")
    assert warning.fields["error"] == "UnexpectedHostStateError"


def test_reboot_is_refused_when_the_host_is_ready_for_another_version() -> None:
    rig = _ready_rig(current="1.0.0", offered="1.2.0")
    _stage_host(rig, "1.2.0")
    rig.host.activate_update()
    rig.store.set_spec(UpdateState.REBOOTED_INTO_UPDATE, "1.1.0")

    rig.agent.tick()

    assert rig.host.reboots == 0 and rig.node.calls == []
    (warning,) = rig.log.at("warning")
    assert warning.fields["error"] == "VersionMismatchError"


def test_back_on_the_new_version_the_agent_restores_the_node_before_reporting() -> None:
    rig = _ready_rig(current="1.1.0", offered=None)
    rig.node.cordoned = rig.node.excluded_from_load_balancers = True
    writes_seen_at_uncordon: list[int] = []
    rig.node.on_call = lambda call: writes_seen_at_uncordon.append(len(rig.store.status_writes))
    rig.store.set_spec(UpdateState.REBOOTED_INTO_UPDATE, "1.1.0")

    rig.agent.tick()

    assert rig.node.calls == ["restore_to_load_balancers", "uncordon"]
    assert not rig.node.cordoned and not rig.node.excluded_from_load_balancers
    assert writes_seen_at_uncordon == [1, 1]  # the report came after both
    assert _state(rig) is UpdateState.REBOOTED_INTO_UPDATE
    assert rig.host.reboots == 0


def test_monitoring_update_uncordons_defensively() -> None:
    rig = _ready_rig(current="1.1.0", offered=None)
    rig.store.set_spec(UpdateState.MONITORING_UPDATE, "1.1.0")

    rig.agent.tick()

    assert "uncordon" in rig.node.calls
    assert _state(rig) is UpdateState.MONITORING_UPDATE


def test_idle_after_monitoring_needs_no_node_call() -> None:
    rig = _ready_rig(current="1.1.0", offered=None)
    rig.store.set_spec(UpdateState.MONITORING_UPDATE, "1.1.0")
    rig.agent.tick()
    rig.node.calls.clear()
    rig.store.set_spec(UpdateState.IDLE, "1.1.0")

    rig.agent.tick()

    assert rig.node.calls == []
    assert _state(rig) is UpdateState.IDLE


def test_idle_after_error_reset_recovers_the_node() -> None:
    rig = _ready_rig()
    rig.store.set_spec(UpdateState.REBOOTED_INTO_UPDATE, "1.1.0")
    rig.agent.tick()
    assert _state(rig) is UpdateState.ERROR_RESET
    rig.node.cordoned = True
    rig.store.set_spec(UpdateState.IDLE, "1.1.0")

    rig.agent.tick()

    assert rig.node.calls[-2:] == ["restore_to_load_balancers", "uncordon"]
    assert not rig.node.cordoned
    assert _state(rig) is UpdateState.IDLE
    assert rig.log.events("node.recovered")


def test_a_crash_not_yet_answered_by_the_controller_is_not_retried() -> None:
    rig = _ready_rig(current="1.0.0", offered="1.2.0")
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")
    rig.agent.tick()
    rig.host.calls.clear()

    assert rig.agent.tick() is Next.WAIT_FOR_CHANGE

    assert _update_commands(rig) == []
    assert rig.store.status is not None and rig.store.status.crash_count == 1


def test_spec_error_reset_is_fatal() -> None:
    rig = _ready_rig()
    rig.store.set_spec(UpdateState.ERROR_RESET)

    outcome = rig.agent.tick()

    assert isinstance(outcome, AgentExit) and outcome.kind is ExitKind.FATAL
    assert "ErrorReset" in outcome.reason
    assert [line.event for line in rig.log.at("error")] == ["agent.fatal"]


def test_spec_without_a_version_fails_the_step_instead_of_guessing() -> None:
    rig = _ready_rig()
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, None)

    rig.agent.tick()

    assert "prepare_update" not in rig.host.calls
    assert _state(rig) is UpdateState.ERROR_RESET
