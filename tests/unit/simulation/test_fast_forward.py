"""simulate's fast clock: it steps ahead only while every node offered an update waits on the
clock alone, never past the moment the first of those waits ends, by the rate less one times
the real time that passed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from brupop.adapters.system.shared_clock import SharedClock
from brupop.domain.reason import Reason
from brupop.domain.reporting.waiting_reason import NodeReport, RolloutView
from brupop.domain.rollout.backoff import retry_allowed_at
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.shadow import Shadow, ShadowStatus
from brupop.domain.starting.start_holds import StartHold
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from brupop.simulation.fleet.fast_forward import FastForward, clock_wait_end

NOW = datetime(2026, 12, 7, 0, 0, tzinfo=UTC)
LATER = NOW + timedelta(hours=48)
WINDOW_OPENS = NOW + timedelta(hours=1)


def _row(node: str, reason: Reason) -> NodeReport:
    return NodeReport(
        node=node,
        shadow=f"brs-{node}",
        state="Idle",
        version="1.19.0",
        target_state="Idle",
        target_version="",
        crash_count=0,
        reason=reason,
        detail="",
    )


def _view(holds: dict[str, StartHold] | None = None) -> RolloutView:
    return RolloutView(
        now=NOW,
        rollout_rules=RolloutRules(ConcurrencyLimit(1)),
        window=MaintenanceWindow.starting("* * * * * * *", now=NOW),
        window_open=True,
        start_holds=holds or {},
    )


def _too_new(until: datetime | None = LATER) -> StartHold:
    return StartHold(Reason.RELEASE_TOO_NEW, "1.20.0 first offered ...", until=until)


def test_a_fleet_held_by_its_release_age_waits_until_the_earliest_node_may_start() -> None:
    view = _view({"brs-node-01": _too_new(LATER), "brs-node-02": _too_new(LATER + timedelta(1))})
    rows = [_row("node-01", Reason.RELEASE_TOO_NEW), _row("node-02", Reason.RELEASE_TOO_NEW)]

    assert clock_wait_end(rows, view, {}, None, None) == LATER


def test_a_fleet_outside_its_windows_waits_until_the_policy_next_allows_a_start() -> None:
    rows = [_row("node-01", Reason.OUTSIDE_WINDOW), _row("node-02", Reason.BLACKOUT)]

    assert clock_wait_end(rows, _view(), {}, WINDOW_OPENS, None) == WINDOW_OPENS


def test_canaries_soaking_make_the_others_wait_until_the_soak_ends() -> None:
    rows = [_row("node-01", Reason.NO_UPDATE), _row("node-02", Reason.CANARY_SOAK)]

    assert clock_wait_end(rows, _view(), {}, None, LATER) == LATER


def test_nodes_waiting_for_canaries_to_update_wait_as_long_as_the_canaries_do() -> None:
    young = StartHold(Reason.NODE_TOO_YOUNG, "node is 1m old; starts after 10m", until=LATER)
    rows = [_row("node-01", Reason.NODE_TOO_YOUNG), _row("node-02", Reason.CANARY_SOAK)]

    assert clock_wait_end(rows, _view({"brs-node-01": young}), {}, None, None) == LATER


def test_a_node_backing_off_waits_until_its_retry_is_allowed() -> None:
    status = ShadowStatus(
        current_version="1.19.0",
        target_version="1.20.0",
        current_state="Idle",
        crash_count=2,
        state_transition_failure_timestamp=NOW,
    )
    shadow = Shadow(name="brs-node-01", namespace="ns", node_name="node-01", node_uid="u")
    shadows = {"brs-node-01": shadow.model_copy(update={"status": status})}
    retry = retry_allowed_at(status)

    end = clock_wait_end([_row("node-01", Reason.BACKING_OFF)], _view(), shadows, None, None)

    assert retry is not None and retry > NOW
    assert end == retry


def test_a_node_waiting_on_anything_but_the_clock_keeps_the_clock_real() -> None:
    view = _view({"brs-node-01": _too_new()})
    for other in (Reason.PAUSED, Reason.UPDATING, Reason.STARTING, Reason.BUDGET_FULL):
        rows = [_row("node-01", Reason.RELEASE_TOO_NEW), _row("node-02", other)]
        assert clock_wait_end(rows, view, {}, WINDOW_OPENS, LATER) is None, other


def test_a_wait_on_the_clock_without_a_known_end_keeps_the_clock_real() -> None:
    rows = [_row("node-01", Reason.OUTSIDE_WINDOW)]

    assert clock_wait_end(rows, _view(), {}, None, None) is None
    assert (
        clock_wait_end([_row("node-01", Reason.RELEASE_TOO_NEW)], _view(), {}, None, None) is None
    )


def test_nodes_whose_host_cannot_update_do_not_stop_the_clock_stepping_to_a_wait_end() -> None:
    young = StartHold(Reason.NODE_TOO_YOUNG, "node is 1m old; starts after 10m", until=LATER)
    rows = [
        _row("node-01", Reason.NODE_TOO_YOUNG),
        _row("node-02", Reason.NO_IN_PLACE_UPDATES),
        _row("node-03", Reason.NO_OFFER_FOR_VARIANT),
    ]

    assert clock_wait_end(rows, _view({"brs-node-01": young}), {}, None, None) == LATER


def test_a_fleet_with_nothing_to_take_has_nothing_to_wait_for() -> None:
    assert clock_wait_end([_row("node-01", Reason.NO_UPDATE)], _view(), {}, None, None) is None
    assert clock_wait_end([_row("node-01", Reason.OUTSIDE_WINDOW)], None, {}, LATER, None) is None


def test_the_clock_steps_by_the_rate_less_one_times_the_real_time(tmp_path: Path) -> None:
    clock = SharedClock.create(tmp_path / "clock", 0.0)
    forward = FastForward(clock, rate=101.0)
    far = datetime.now(UTC) + timedelta(days=30)

    forward.step(far, monotonic=10.0)
    forward.step(far, monotonic=10.5)

    assert forward.waiting
    assert forward.advanced_seconds == 50.0
    assert clock.offset() == 50.0


def test_the_clock_never_steps_past_the_end_of_the_wait(tmp_path: Path) -> None:
    clock = SharedClock.create(tmp_path / "clock", 0.0)
    forward = FastForward(clock, rate=1e6)
    end = datetime.now(UTC) + timedelta(hours=2)

    forward.step(end, monotonic=0.0)
    forward.step(end, monotonic=100.0)

    assert abs((clock.now() - end).total_seconds()) < 1
    forward.step(end, monotonic=200.0)
    assert not forward.waiting
    assert abs((clock.now() - end).total_seconds()) < 1


def test_the_clock_stays_put_while_nothing_waits_on_it(tmp_path: Path) -> None:
    clock = SharedClock.create(tmp_path / "clock", 0.0)
    forward = FastForward(clock, rate=3600.0)

    forward.step(None, monotonic=0.0)
    forward.step(None, monotonic=5.0)

    assert not forward.waiting
    assert clock.offset() == 0.0


def test_at_rate_one_the_clock_never_steps(tmp_path: Path) -> None:
    clock = SharedClock.create(tmp_path / "clock", 0.0)
    forward = FastForward(clock, rate=1.0)

    forward.step(datetime.now(UTC) + timedelta(days=1), monotonic=0.0)
    forward.step(datetime.now(UTC) + timedelta(days=1), monotonic=5.0)

    assert not forward.waiting
    assert clock.offset() == 0.0
