"""Simulate's clock: the virtual wall clock every process of the run shares (`--start-at`), and
its steps ahead while the whole fleet waits on it (`--clock-rate`).

A step ahead is safe only while nothing is in flight: a node's timeouts, its drain, gate and
hooks count from stamps of this clock, so the clock moves faster only while no node is outside
Idle and every node offered an update waits on the clock alone, and never past the moment the
first of those waits ends. Until then no node can start, whatever the controller's pass running
meanwhile sees; the pass after that moment starts nodes on a clock that runs at the real rate
again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from brupop.adapters.system.shared_clock import SharedClock
from brupop.cli.fleet_description.simulated_cluster import SimulatedCluster
from brupop.domain.planning.fleet_holds import FleetHolds
from brupop.domain.policy.effective_policy import resolve_policy
from brupop.domain.policy.policy_object import PolicySnapshot
from brupop.domain.reason import Reason
from brupop.domain.reporting.waiting_reason import NodeReport, RolloutView
from brupop.domain.rollout.backoff import retry_allowed_at
from brupop.domain.rollout.concurrency import holds_slot
from brupop.domain.shadow import Shadow
from brupop.simulation.flags.clock_flags import ClockChoice
from brupop.simulation.fleet.simulated_controller import SimulatedController

CLOCK_FILE_NAME = "clock-offset"
SCHEDULE_REASONS = frozenset({Reason.OUTSIDE_WINDOW, Reason.BLACKOUT, Reason.FINISH_BY})


def start_clock(choice: ClockChoice, work_dir: Path) -> SharedClock:
    """The run's clock, at --start-at (or now), in a file the run's processes are given."""
    offset = 0.0
    if choice.start_at is not None:
        offset = (choice.start_at - datetime.now(UTC)).total_seconds()
    return SharedClock.create(work_dir / CLOCK_FILE_NAME, offset)


def fleet_wait_end(
    controller: SimulatedController, cluster: SimulatedCluster, clock: SharedClock
) -> datetime | None:
    """`clock_wait_end` of the fleet as it is now: the controller's last pass, and the shadows
    read afresh, so that a node that just left Idle stops the clock's steps."""
    view, expected = controller.last_pass()
    if view is None:
        return None
    shadows = {shadow.name: shadow for shadow in cluster.shadows.list().items}
    if any(holds_slot(shadow) for shadow in shadows.values()):
        return None
    snapshot = cluster.policies.read()
    return clock_wait_end(
        controller.status_rows(),
        view,
        shadows,
        fleet_hold_until(snapshot, expected, clock.now()),
        soak_end(snapshot),
    )


def clock_wait_end(
    rows: Iterable[NodeReport],
    view: RolloutView | None,
    shadows: Mapping[str, Shadow],
    fleet_hold_until: datetime | None,
    soak_ends: datetime | None,
) -> datetime | None:
    """When the first wait on the clock ends, if every node offered an update waits on the
    clock (and none updates); None otherwise, or when nothing waits."""
    if view is None:
        return None
    ends: list[datetime] = []
    for row in rows:
        if row.reason is Reason.NO_UPDATE or row.reason.cannot_update:
            continue  # nothing to take, or a host that cannot take it: no wait on the clock
        if row.reason is Reason.CANARY_SOAK and soak_ends is None:
            continue  # waits for the canaries to update: their own rows say until when
        end = _row_wait_end(row, view, shadows, fleet_hold_until, soak_ends)
        if end is None:
            return None
        ends.append(end)
    return min(ends, default=None)


def _row_wait_end(
    row: NodeReport,
    view: RolloutView,
    shadows: Mapping[str, Shadow],
    fleet_hold_until: datetime | None,
    soak_ends: datetime | None,
) -> datetime | None:
    """When the wait of one node's row ends by the clock alone; None: it is no wait on it."""
    if row.reason in SCHEDULE_REASONS:
        return fleet_hold_until
    if row.reason is Reason.CANARY_SOAK:
        return soak_ends
    if row.reason is Reason.BACKING_OFF:
        shadow = shadows.get(row.shadow)
        status = shadow.status if shadow is not None else None
        return retry_allowed_at(status) if status is not None else None
    hold = view.start_holds.get(row.shadow)
    if hold is not None and hold.reason is row.reason:
        return hold.until  # a release age or a node's age; None for the other start rules
    return None


def fleet_hold_until(
    snapshot: PolicySnapshot, expected_seconds: int, now: datetime
) -> datetime | None:
    """When the policy's windows, blackouts and finishBy next allow a start (as the controller
    decides it), or None when they do not hold now or no start is possible."""
    policy = snapshot.default
    holds = FleetHolds(
        resolve_policy(policy), policy.status if policy is not None else None, expected_seconds
    )
    hold = holds.hold(now)
    return hold.until if hold is not None else None


def soak_end(snapshot: PolicySnapshot) -> datetime | None:
    """When the canaries' soak ends, as the controller wrote it in the policy's status."""
    policy = snapshot.default
    status = policy.status if policy is not None else None
    canary = status.canary if status is not None else None
    return canary.soak_ends_at if canary is not None else None


class FastForward:
    """Moves the run's clock ahead by `rate` times the real time, while the fleet waits on it."""

    def __init__(self, clock: SharedClock, rate: float) -> None:
        self._clock = clock
        self._rate = rate
        self._last: float | None = None
        self.waiting = False  # the last step saw a wait on the clock still ahead
        self.advanced_seconds = 0.0

    @property
    def enabled(self) -> bool:
        return self._rate > 1

    def step(self, wait_end: datetime | None, monotonic: float) -> None:
        """Advance towards `wait_end` (None: nothing waits on the clock alone, stay put) by the
        real time since the last step, times the rate less one."""
        elapsed = 0.0 if self._last is None else max(0.0, monotonic - self._last)
        self._last = monotonic
        ahead = (wait_end - self._clock.now()).total_seconds() if wait_end is not None else 0.0
        self.waiting = self.enabled and ahead > 0
        if not self.waiting:
            return
        step = min((self._rate - 1) * elapsed, ahead)
        self._clock.advance(step)
        self.advanced_seconds += step
