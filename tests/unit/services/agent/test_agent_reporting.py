"""The agent creates its shadow, reports the host's versions, and writes only what changed."""

from __future__ import annotations

from brupop.domain.states import UpdateState
from brupop.ports.errors import HostRejectedError, HostUnavailableError
from brupop.services.agent.config import AgentConfig
from brupop.services.agent.outcomes import Next
from tests.support.agent_rig import make_rig


def test_agent_creates_missing_shadow_and_reports_idle_with_the_offered_target() -> None:
    rig = make_rig(current="1.0.0", offered="1.1.0")

    assert rig.agent.tick() is Next.WAIT_FOR_CHANGE

    assert rig.store.calls[:2] == ["get", "create"]
    status = rig.store.status
    assert status is not None
    assert (status.current_version, status.target_version) == ("1.0.0", "1.1.0")
    assert status.current_state is UpdateState.IDLE
    assert (status.crash_count, status.state_transition_failure_timestamp) == (0, None)
    assert rig.log.events("shadow.created")


def test_target_version_is_the_running_version_when_the_host_offers_nothing() -> None:
    rig = make_rig(current="1.0.0", offered=None)

    rig.agent.tick()

    assert rig.store.status is not None
    assert rig.store.status.target_version == "1.0.0"


def test_agent_writes_status_only_when_it_changed() -> None:
    rig = make_rig()
    rig.agent.tick()
    rig.agent.tick()
    rig.agent.tick()

    assert len(rig.store.status_writes) == 1

    rig.clock.advance(120)
    rig.host.offer("1.2.0")
    rig.agent.tick()

    assert len(rig.store.status_writes) == 2
    assert rig.store.status is not None
    assert rig.store.status.target_version == "1.2.0"


def test_update_check_runs_at_once_then_at_most_every_interval() -> None:
    rig = make_rig(config=AgentConfig(update_check_interval_seconds=60))

    rig.agent.tick()
    rig.clock.advance(59)
    rig.agent.tick()
    assert rig.host.calls.count("refresh_updates") == 1

    rig.clock.advance(1)
    rig.agent.tick()
    assert rig.host.calls.count("refresh_updates") == 2


def test_failed_update_check_keeps_the_reported_target_and_warns() -> None:
    rig = make_rig(current="1.0.0", offered="1.1.0")
    rig.agent.tick()
    rig.host.fail_next["refresh_updates"] = HostUnavailableError("Status 423: Update lock held")
    rig.clock.advance(120)

    assert rig.agent.tick() is Next.WAIT_FOR_CHANGE

    assert rig.store.status is not None
    assert rig.store.status.target_version == "1.1.0"
    warnings = rig.log.at("warning")
    assert [w.event for w in warnings] == ["update_check.failed"]
    assert warnings[0].fields["error"] == "HostUnavailableError"


def test_status_is_initialised_even_when_the_first_update_check_fails() -> None:
    rig = make_rig(current="1.0.0", offered="1.1.0")
    rig.host.fail_next["refresh_updates"] = HostRejectedError("no route", status=500)

    rig.agent.tick()

    assert rig.store.status is not None
    assert rig.store.status.target_version == "1.0.0"


def test_unreadable_host_version_changes_nothing_and_retries_later() -> None:
    rig = make_rig()
    rig.agent.tick()
    rig.store.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.1.0")
    rig.host.fail_next["os_info"] = HostUnavailableError("Failed to send request: socket down")

    assert rig.agent.tick() is Next.RETRY_LATER

    assert "prepare_update" not in rig.host.calls
    assert rig.store.status is not None
    assert rig.store.status.current_state is UpdateState.IDLE
    assert [w.event for w in rig.log.at("warning")] == ["host.unreadable"]
