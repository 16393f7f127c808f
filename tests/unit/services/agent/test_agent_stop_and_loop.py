"""The loop: long-polls when idle, pauses after errors, and stops only at safe points."""

from __future__ import annotations

import signal

from brupop.domain.host.host import HostUpdateState, HostUpdateStatus
from brupop.domain.states import UpdateState
from brupop.ports.errors import HostCommandKilledError, UnavailableError
from brupop.services.agent.config import AgentConfig
from brupop.services.agent.outcomes import AgentExit, ExitKind
from tests.fakes.shadow_store import InMemoryShadowStore
from tests.fakes.update_api import FakeUpdateApi
from tests.support.agent_rig import AgentRig, make_rig


class _HostThatStopsTheAgent(FakeUpdateApi):
    """A host during whose `command` the agent is asked to stop (a SIGTERM arriving)."""

    def __init__(self, command: str) -> None:
        super().__init__("1.0.0", "1.1.0")
        self.command = command
        self.rig: AgentRig | None = None

    def prepare_update(self) -> HostUpdateStatus:
        status = super().prepare_update()
        self._maybe_stop("prepare_update")
        return status

    def activate_update(self) -> HostUpdateStatus:
        status = super().activate_update()
        self._maybe_stop("activate_update")
        return status

    def _maybe_stop(self, command: str) -> None:
        if command == self.command and self.rig is not None:
            self.rig.stop.request()


def _rig_stopped_during(command: str) -> AgentRig:
    host = _HostThatStopsTheAgent(command)
    rig = make_rig(host=host)
    host.rig = rig
    rig.agent.tick()
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")
    return rig


def test_stop_during_a_step_ends_before_the_next_step_without_writing_status() -> None:
    rig = _rig_stopped_during("prepare_update")
    writes = len(rig.store.status_writes)

    assert rig.agent.tick() == AgentExit(ExitKind.STOPPED)

    assert "activate_update" not in rig.host.calls
    assert rig.host.state is HostUpdateState.STAGED
    assert len(rig.store.status_writes) == writes
    assert [line.event for line in rig.log.at("info")][-1] == "agent.stopped"
    assert rig.log.at("warning") == []


def test_stop_during_the_last_step_still_reports_the_finished_state_whole() -> None:
    rig = _rig_stopped_during("activate_update")

    assert rig.agent.run() == AgentExit(ExitKind.STOPPED)

    status = rig.store.status
    assert status is not None
    assert status.current_state is UpdateState.STAGED_AND_PERFORMED_UPDATE
    assert (status.current_version, status.target_version) == ("1.0.0", "1.1.0")
    assert len(rig.log.events("agent.stopped")) == 1


def test_killed_apiclient_while_stopping_is_a_quiet_stop_not_a_crash() -> None:
    rig = make_rig()
    rig.agent.tick()
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")
    rig.stop.request()  # SIGTERM reached the agent and apiclient alike
    rig.host.fail_next["update_status"] = HostCommandKilledError(
        "apiclient raw -u /updates/status: killed by SIGTERM", int(signal.SIGTERM)
    )

    assert rig.agent.tick() == AgentExit(ExitKind.STOPPED)

    assert rig.store.status is not None
    assert rig.store.status.current_state is UpdateState.IDLE
    assert rig.log.at("warning") == []


def test_stop_while_waiting_for_the_host_to_reboot_still_ends_as_rebooting() -> None:
    rig = make_rig(config=AgentConfig(reboot_wait_seconds=180))
    rig.agent.tick()
    rig.host.refresh_updates()
    rig.host.prepare_update()
    rig.host.activate_update()
    rig.store.set_spec(UpdateState.REBOOTED_INTO_UPDATE, "1.1.0")
    start = rig.clock.monotonic()
    original_sleep = rig.clock.sleep

    def sleep_then_shutdown(seconds: float) -> None:
        original_sleep(seconds)
        if rig.clock.monotonic() - start >= 10:
            rig.stop.request()

    rig.clock.sleep = sleep_then_shutdown  # type: ignore[method-assign]

    assert rig.agent.run() == AgentExit(ExitKind.REBOOTING)

    assert rig.clock.monotonic() - start < 11
    assert len(rig.log.events("node.rebooting_into_update")) == 1
    assert rig.log.events("agent.stopped") == []


def test_idle_agent_long_polls_the_shadow_instead_of_sleeping() -> None:
    rig = make_rig(config=AgentConfig(shadow_wait_seconds=30))
    polls: list[str] = []

    def count_and_stop(store: InMemoryShadowStore) -> None:
        polls.append("poll")
        if len(polls) == 3:
            rig.stop.request()

    rig.store.on_wait = count_and_stop

    assert rig.agent.run() == AgentExit(ExitKind.STOPPED)

    assert rig.store.calls.count("wait_for_change") == 3
    assert rig.store.calls.count("get") == 1  # each poll's answer feeds the next tick
    assert rig.clock.sleeps == [30, 30, 30]  # the polls' own time; no loop pauses
    assert len(rig.log.events("agent.stopped")) == 1


def test_a_spec_change_seen_by_the_long_poll_is_acted_on_at_once() -> None:
    rig = make_rig(config=AgentConfig(reboot_wait_seconds=0))
    rig.host.reboot_kills_apiclient = True

    def controller(store: InMemoryShadowStore) -> None:
        status = store.status
        assert status is not None and store.shadow is not None
        if status.current_state is not store.shadow.spec.state:
            return
        if status.current_state is UpdateState.ERROR_RESET:
            raise AssertionError("the agent crashed")
        follow = {
            UpdateState.IDLE: UpdateState.STAGED_AND_PERFORMED_UPDATE,
            UpdateState.STAGED_AND_PERFORMED_UPDATE: UpdateState.REBOOTED_INTO_UPDATE,
        }
        store.set_spec(follow[status.current_state], "1.1.0")

    rig.store.on_wait = controller

    assert rig.agent.run() == AgentExit(ExitKind.REBOOTING)

    assert rig.host.current_version == "1.1.0"
    assert rig.clock.sleeps == []  # never slept: every poll answered with a change


def test_after_an_error_the_loop_pauses_the_loop_interval() -> None:
    rig = make_rig(config=AgentConfig(loop_interval_seconds=5))
    rig.store.fail_next["get"] = UnavailableError("apiserver: connection refused")
    start = rig.clock.monotonic()
    polled_at: list[float] = []

    def stop(store: InMemoryShadowStore) -> None:
        polled_at.append(rig.clock.monotonic() - start)
        rig.stop.request()

    rig.store.on_wait = stop

    assert rig.agent.run() == AgentExit(ExitKind.STOPPED)

    assert rig.store.calls[:2] == ["get", "get"]
    assert polled_at == [5]


def test_failed_long_poll_is_warned_and_followed_by_the_loop_interval() -> None:
    rig = make_rig(config=AgentConfig(loop_interval_seconds=5))
    rig.agent.tick()
    rig.store.fail_next["wait_for_change"] = UnavailableError("apiserver: 502")
    start = rig.clock.monotonic()
    polled_at: list[float] = []

    def stop(store: InMemoryShadowStore) -> None:
        polled_at.append(rig.clock.monotonic() - start)
        rig.stop.request()

    rig.store.on_wait = stop

    assert rig.agent.run() == AgentExit(ExitKind.STOPPED)

    assert [w.event for w in rig.log.at("warning")] == ["cluster.unavailable"]
    assert polled_at == [5]  # the failed poll, then the pause, then the next poll


def test_a_bug_in_the_long_poll_is_logged_with_its_traceback_and_the_loop_goes_on() -> None:
    rig = make_rig(config=AgentConfig(loop_interval_seconds=5))
    rig.agent.tick()
    start = rig.clock.monotonic()
    polled_at: list[float] = []

    def broken_then_stop(store: InMemoryShadowStore) -> None:
        polled_at.append(rig.clock.monotonic() - start)
        if len(polled_at) == 1:
            raise RuntimeError("bug in the shadow store")
        rig.stop.request()

    rig.store.on_wait = broken_then_stop

    assert rig.agent.run() == AgentExit(ExitKind.STOPPED)

    (error,) = rig.log.at("error")
    assert error.event == "agent.unexpected_error"
    assert error.fields["error"] == "RuntimeError"
    assert error.fields["exc_info"] is True  # the log line carries the traceback
    assert polled_at == [0, 5]  # the broken poll, the loop interval, a tick, the next poll
