"""Failed steps become ErrorReset with one more crash; cluster hiccups change nothing."""

from __future__ import annotations

import signal
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from brupop.domain.host.agent_shadow import AgentShadowSpec
from brupop.domain.states import UpdateState
from brupop.ports.errors import (
    ConflictError,
    DrainFailedError,
    ForbiddenError,
    HostApiError,
    HostCommandFailedError,
    HostCommandKilledError,
    HostRejectedError,
    HostResponseError,
    HostUnavailableError,
    InvalidObjectError,
    NotFoundError,
    PortError,
    UnavailableError,
)
from brupop.services.agent.outcomes import Next
from tests.support.agent_rig import AgentRig, make_rig


def _rig_asked_to_stage() -> AgentRig:
    rig = make_rig(current="1.0.0", offered="1.1.0")
    rig.agent.tick()
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")
    return rig


def _rig_asked_to_reboot() -> AgentRig:
    rig = _rig_asked_to_stage()
    rig.agent.tick()
    rig.store.set_spec(UpdateState.REBOOTED_INTO_UPDATE, "1.1.0")
    return rig


HOST_FAILURES: list[HostApiError] = [
    HostRejectedError("prepare-update: not allowed (HTTP 409)", status=409),
    HostCommandFailedError("Host command prepare failed"),
    HostUnavailableError("Update lock held (HTTP 423) past the deadline"),
    HostResponseError("apiclient printed something that is not JSON"),
    HostCommandKilledError("apiclient raw -u /actions/prepare-update: killed by SIGKILL", 9),
]


@pytest.mark.parametrize("error", HOST_FAILURES, ids=lambda e: type(e).__name__)
def test_failed_host_step_becomes_error_reset_with_one_more_crash(error: HostApiError) -> None:
    rig = _rig_asked_to_stage()
    rig.host.fail_next["prepare_update"] = error

    assert rig.agent.tick() is Next.RETRY_LATER

    status = rig.store.status
    assert status is not None
    assert status.current_state is UpdateState.ERROR_RESET
    assert status.crash_count == 1
    assert status.state_transition_failure_timestamp == rig.clock.now()
    (warning,) = rig.log.at("warning")
    assert warning.event == "update.step_failed"
    assert warning.fields["error"] == type(error).__name__
    assert warning.fields["reason"] == str(error)
    assert "exc_info" not in warning.fields


def test_failed_drain_becomes_error_reset_and_does_not_reboot() -> None:
    rig = _rig_asked_to_reboot()
    rig.node.fail_next["cordon_and_drain"] = DrainFailedError(
        "pods still on node: shop/web-1 (PodDisruptionBudget shop/web)", ("shop/web-1",)
    )

    rig.agent.tick()

    assert rig.host.reboots == 0
    assert rig.store.status is not None
    assert rig.store.status.current_state is UpdateState.ERROR_RESET
    assert rig.log.at("warning")[0].fields["error"] == "DrainFailedError"


def test_failed_reboot_command_becomes_error_reset() -> None:
    rig = _rig_asked_to_reboot()
    rig.host.fail_next["reboot"] = HostRejectedError("reboot refused (HTTP 500)", status=500)

    assert rig.agent.tick() is Next.RETRY_LATER

    assert rig.store.status is not None
    assert rig.store.status.current_state is UpdateState.ERROR_RESET


SHADOW_FAILURES = [
    NotFoundError("brs-node-1 not found"),
    UnavailableError("apiserver: connection refused"),
    ConflictError("resourceVersion 7 is stale"),
    ForbiddenError("token review refused"),
]


@pytest.mark.parametrize("error", SHADOW_FAILURES, ids=lambda e: type(e).__name__)
def test_shadow_write_error_changes_nothing_and_is_retried(error: PortError) -> None:
    rig = _rig_asked_to_stage()
    rig.store.fail_next["update_status"] = error
    before = rig.store.status

    assert rig.agent.tick() is Next.RETRY_LATER

    assert rig.store.status == before
    (warning,) = rig.log.at("warning")
    assert warning.event == "cluster.unavailable"
    assert warning.fields["error"] == type(error).__name__
    assert "exc_info" not in warning.fields
    # The next loop finds the host already Ready and reports the state without redoing work.
    assert rig.agent.tick() is Next.WAIT_FOR_CHANGE
    assert rig.store.status is not None
    assert rig.store.status.current_state is UpdateState.STAGED_AND_PERFORMED_UPDATE
    assert rig.store.status.crash_count == 0


def test_shadow_read_error_is_retried_and_repeats_are_not_warned_again() -> None:
    rig = _rig_asked_to_stage()
    rig.store.fail_always["get"] = UnavailableError("apiserver: connection refused")

    for _ in range(3):
        assert rig.agent.tick() is Next.RETRY_LATER

    assert len(rig.log.at("warning")) == 1
    assert len(rig.log.events("cluster.unavailable")) == 3
    del rig.store.fail_always["get"]
    rig.agent.tick()
    assert rig.log.events("agent.recovered_from_trouble")


def test_unavailable_apiserver_during_uncordon_is_not_a_crash() -> None:
    rig = make_rig(current="1.1.0", offered=None)
    rig.agent.tick()
    rig.store.set_spec(UpdateState.MONITORING_UPDATE, "1.1.0")
    rig.node.fail_next["uncordon"] = UnavailableError("apiserver: 503")

    assert rig.agent.tick() is Next.RETRY_LATER

    assert rig.store.status is not None
    assert rig.store.status.current_state is UpdateState.IDLE
    assert rig.store.status.crash_count == 0


def test_crash_count_grows_with_each_failure_and_resets_after_a_monitored_update() -> None:
    rig = _rig_asked_to_stage()
    rig.host.fail_next["prepare_update"] = HostCommandFailedError("prepare failed")
    rig.agent.tick()
    rig.store.set_spec(UpdateState.IDLE, "1.1.0")
    rig.agent.tick()
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")
    rig.host.fail_next["activate_update"] = HostCommandFailedError("activate failed")
    rig.agent.tick()
    assert rig.store.status is not None and rig.store.status.crash_count == 2
    failed_at = rig.store.status.state_transition_failure_timestamp
    assert failed_at is not None

    rig.store.set_spec(UpdateState.IDLE, "1.1.0")
    rig.agent.tick()
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")
    rig.agent.tick()
    assert rig.store.status.crash_count == 2  # success keeps the record for the backoff
    rig.host.current_version = "1.1.0"  # as if rebooted into it
    for state in (UpdateState.REBOOTED_INTO_UPDATE, UpdateState.MONITORING_UPDATE):
        rig.store.set_spec(state, "1.1.0")
        rig.agent.tick()
        assert rig.store.status.crash_count == 2
        assert rig.store.status.state_transition_failure_timestamp == failed_at

    rig.store.set_spec(UpdateState.IDLE, "1.1.0")
    rig.agent.tick()

    assert rig.store.status.current_state is UpdateState.IDLE
    assert rig.store.status.crash_count == 0
    assert rig.store.status.state_transition_failure_timestamp is None


def test_a_crash_the_controller_recorded_in_monitoring_outlives_the_return_to_idle() -> None:
    # The health gate (or the MonitoringUpdate timeout) failed the update: the controller wrote
    # one more crash stamped now, and an Idle spec stamped with that same time.
    rig = _rig_asked_to_reboot()
    rig.agent.tick()
    rig.host.current_version = "1.1.0"  # as if rebooted into it
    rig.store.set_spec(UpdateState.MONITORING_UPDATE, "1.1.0")
    rig.agent.tick()
    assert (
        rig.store.status is not None and rig.store.status.current_state.name == "MONITORING_UPDATE"
    )
    failed_at = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
    rig.store.update_status(
        replace(rig.store.status, crash_count=1, state_transition_failure_timestamp=failed_at)
    )
    rig.store.put(
        spec=AgentShadowSpec(
            state=UpdateState.IDLE, state_transition_timestamp=failed_at, version="1.1.0"
        ),
        status=rig.store.status,
    )

    rig.agent.tick()

    assert rig.store.status.current_state is UpdateState.IDLE
    assert rig.store.status.crash_count == 1
    assert rig.store.status.state_transition_failure_timestamp == failed_at


def test_killed_apiclient_during_a_step_is_logged_as_a_failure_not_success() -> None:
    rig = _rig_asked_to_stage()
    rig.host.fail_next["activate_update"] = HostCommandKilledError(
        "apiclient raw -u /actions/activate-update -m POST: killed by SIGTERM",
        int(signal.SIGTERM),
    )

    rig.agent.tick()

    assert rig.store.status is not None
    assert rig.store.status.current_state is UpdateState.ERROR_RESET
    assert rig.log.at("warning")[0].fields["error"] == "HostCommandKilledError"


def test_an_unexpected_error_in_a_tick_is_logged_once_with_its_traceback_and_retried() -> None:
    rig = _rig_asked_to_stage()
    rig.store.fail_always["get"] = RuntimeError("a bug in reading the shadow")

    for _ in range(3):
        assert rig.agent.tick() is Next.RETRY_LATER

    (error,) = rig.log.at("error")
    assert error.event == "agent.unexpected_error"
    assert (error.fields["error"], error.fields["reason"]) == (
        "RuntimeError",
        "a bug in reading the shadow",
    )
    assert error.fields["exc_info"] is True
    assert len(rig.log.events("agent.unexpected_error_again")) == 2
    assert "prepare_update" not in rig.host.calls  # nothing was done on the host meanwhile


def test_after_an_unexpected_error_the_agent_recovers_and_finishes_the_step() -> None:
    rig = _rig_asked_to_stage()
    rig.store.fail_next["get"] = KeyError("a bug in reading the shadow")
    assert rig.agent.tick() is Next.RETRY_LATER

    rig.agent.tick()

    assert rig.log.events("agent.recovered_from_unexpected_error")
    assert rig.store.status is not None
    assert rig.store.status.current_state is UpdateState.STAGED_AND_PERFORMED_UPDATE
    assert rig.store.status.crash_count == 0


def test_a_refused_report_is_one_warning_per_streak_and_no_recovery_until_one_is_taken() -> None:
    rig = make_rig(current="1.0.0", offered="1.1.0")
    rig.agent.tick()
    refused = InvalidObjectError("update status: 422 current_version 1.0.5 is named by no host")
    rig.store.fail_always["update_status"] = refused
    rig.host.current_version = "1.0.5"  # updated outside brupop: the apiserver refuses it

    for _ in range(4):
        assert rig.agent.tick() is Next.RETRY_LATER

    (warning,) = rig.log.at("warning")
    assert warning.event == "cluster.refused"
    assert warning.fields["error"] == "InvalidObjectError"
    assert warning.fields["reason"] == str(refused)
    assert len(rig.log.events("cluster.refused")) == 4, "the repeats go to DEBUG"
    assert rig.log.events("agent.recovered_from_trouble") == []
    del rig.store.fail_always["update_status"]
    assert rig.agent.tick() is Next.WAIT_FOR_CHANGE
    assert len(rig.log.events("agent.recovered_from_trouble")) == 1
    assert rig.store.status is not None and rig.store.status.current_version == "1.0.5"
