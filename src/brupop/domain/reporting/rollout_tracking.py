"""Rollout and fleet tracking for notifications: pure edge detectors over what the controller
already publishes each pass (hosts per state and per version; paused and halted).

* `RolloutTracker`: a rollout is announced once per version the controller offers, when it
  starts a first node towards it (its `UpdateStarted` Event), never from what agents report: an
  agent may claim any version, and a claim is no rollout. Every node then running the version,
  all Idle, is the rollout finished (with the counts and the duration).
* `FleetTracker`: the fleet becoming paused, halted, or neither again (resumed).

A start that comes before the first count of hosts per version (the controller's first pass
starts nodes before it publishes the counts) is announced at that count, so the notice says how
many nodes the rollout goes to.

A start towards a version some node already runs is a rollout under way (another replica, or
an earlier run of this one, announced it): it is followed, not announced again. A replica that
does not lead follows the rollout from the versions alone, so that on taking over it can tell
the finish.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from brupop.domain.reporting.notifications import Notification, NotificationKind
from brupop.domain.states import UpdateState
from brupop.domain.versions import compare_versions, is_version

_IDLE = UpdateState.IDLE.value
OFFERS_KEPT = 64  # versions remembered as announced (a fleet offers a handful)


class RolloutTracker:
    """Starts and ends of rollouts, from the controller's starts and the hosts per version."""

    def __init__(self) -> None:
        self._announced: dict[str, None] = {}  # an ordered set, oldest first
        self._target: str | None = None
        self._started_at: datetime | None = None
        self._failures = 0
        self._versions: dict[str, int] | None = None  # None: not counted yet
        self._pending = False  # a start seen before the first count: announced at it

    def count_failure(self) -> None:
        """One node failed during the current rollout (shown in its finish)."""
        if self._target is not None:
            self._failures += 1

    def starting(self, version: str, now: datetime) -> list[Notification]:
        """The controller started a node's update to `version`: a rollout the first time."""
        if version in self._announced:
            return []
        self._announced[version] = None
        if len(self._announced) > OFFERS_KEPT:
            del self._announced[next(iter(self._announced))]
        self._target = version
        self._started_at = now
        self._failures = 0
        if self._versions is None:
            self._pending = True
            return []
        return self._announced_start(self._versions, now)

    def observe(
        self,
        states: Mapping[str, int],
        versions: Mapping[str, int],
        now: datetime,
        *,
        following: bool = False,
    ) -> list[Notification]:
        """The rollout finished, if it did. `following` (a replica that does not lead): take a
        version newer than the rest, that not every node runs yet, as the rollout under way."""
        self._versions = dict(versions)
        told: list[Notification] = []
        if self._pending:
            self._pending = False
            told = self._announced_start(versions, self._started_at or now)
        total = sum(versions.values())
        if following and self._target is None:
            self._target = _under_way(versions, total)
            self._started_at = now
            self._failures = 0
        target = self._target
        everyone = total > 0 and versions.get(target or "", 0) == total
        if target is not None and everyone and states.get(_IDLE, 0) == total:
            return [*told, self._finished(target, total, now)]
        return told

    def _announced_start(self, versions: Mapping[str, int], now: datetime) -> list[Notification]:
        """The start of the rollout to the target, unless some node runs it already (under
        way: told before this tracker began)."""
        if self._target is None or versions.get(self._target, 0) > 0:
            return []
        return [self._started(versions, now)]

    def _started(self, versions: Mapping[str, int], now: datetime) -> Notification:
        target = self._target
        total = sum(versions.values())
        return Notification(
            NotificationKind.ROLLOUT_STARTED,
            now,
            f"Rollout of Bottlerocket {target} started ({total} nodes)",
            version=target,
            counts={"nodes": total, "updated": versions.get(target or "", 0)},
        )

    def _finished(self, target: str, total: int, now: datetime) -> Notification:
        started = self._started_at or now
        duration = max((now - started).total_seconds(), 0.0)
        failures = self._failures
        self._target = None
        self._started_at = None
        self._failures = 0
        return Notification(
            NotificationKind.ROLLOUT_FINISHED,
            now,
            f"Rollout of Bottlerocket {target} finished: {total} nodes updated, "
            f"{failures} failures, in {duration:.0f} s",
            version=target,
            counts={"nodes": total, "updated": total, "failures": failures},
            duration_seconds=duration,
        )


class FleetTracker:
    """Paused, halted and resumed, from the fleet's two flags."""

    def __init__(self) -> None:
        self._last: tuple[bool, bool] | None = None

    def observe(
        self, *, paused: bool, halted: bool, now: datetime, reason: str = ""
    ) -> list[Notification]:
        """What changed since the last observation."""
        last, self._last = self._last, (paused, halted)
        if last is None or last == (paused, halted):
            return []
        was_paused, was_halted = last
        told: list[Notification] = []
        why = f": {reason}" if reason else ""
        if halted and not was_halted:
            told.append(
                Notification(
                    NotificationKind.FLEET_HALTED,
                    now,
                    f"Rollout halted{why}",
                    reason=reason or None,
                )
            )
        if paused and not was_paused:
            told.append(Notification(NotificationKind.FLEET_PAUSED, now, "Rollout paused"))
        if (was_paused or was_halted) and not (paused or halted):
            told.append(Notification(NotificationKind.FLEET_RESUMED, now, "Rollout resumed"))
        return told


def _under_way(versions: Mapping[str, int], total: int) -> str | None:
    """The version newer than every other one running, when some but not all nodes run it."""
    running = [v for v, count in versions.items() if count > 0 and is_version(v)]
    if len(running) < 2:
        return None
    best = running[0]
    for version in running[1:]:
        if compare_versions(version, best) > 0:
            best = version
    return best if 0 < versions[best] < total else None
