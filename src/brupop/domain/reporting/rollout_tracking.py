"""Rollout and fleet tracking for notifications: pure edge detectors over what the controller
already publishes each pass (hosts per state and per version; paused and halted).

* `RolloutTracker`: the controller starting a first node towards a version no node ran (its
  `UpdateStarted` Event), or else a first node seen running such a version, is a rollout
  started; every node then running it, all Idle, is the rollout finished (with the counts and
  the duration).
* `FleetTracker`: the fleet becoming paused, halted, or neither again (resumed).

The first observation with reported versions is the baseline and tells nothing: a controller
that starts (or a replica that takes over) does not announce what was already true.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from brupop.domain.reporting.notifications import Notification, NotificationKind
from brupop.domain.states import UpdateState
from brupop.domain.versions import compare_versions, is_version

_IDLE = UpdateState.IDLE.value


class RolloutTracker:
    """Starts and ends of rollouts, from hosts per version and per reported state."""

    def __init__(self) -> None:
        self._known: set[str] | None = None
        self._target: str | None = None
        self._started_at: datetime | None = None
        self._failures = 0
        self._versions: dict[str, int] = {}

    def count_failure(self) -> None:
        """One node failed during the current rollout (shown in its finish)."""
        if self._target is not None:
            self._failures += 1

    def starting(self, version: str, now: datetime) -> list[Notification]:
        """The controller started a node's update to `version`."""
        if version in (self._known or ()):
            return []
        self._known = self._known or set()
        self._known.add(version)
        self._target = version
        self._started_at = now
        self._failures = 0
        return [self._started(self._versions, now)]

    def observe(
        self, states: Mapping[str, int], versions: Mapping[str, int], now: datetime
    ) -> list[Notification]:
        """What changed since the last observation."""
        self._versions = dict(versions)
        running = {version for version, count in versions.items() if count > 0}
        if self._known is None:
            if running:  # no agent has reported yet: no baseline to compare with
                self._known = running
            return []
        told: list[Notification] = []
        new = [v for v in sorted(running - self._known) if _newer_than_all(v, self._known)]
        self._known |= running
        if new:
            self._target = _highest(new)
            self._started_at = now
            self._failures = 0
            told.append(self._started(versions, now))
        total = sum(versions.values())
        target = self._target
        everyone = total > 0 and versions.get(target or "", 0) == total
        if target is not None and everyone and states.get(_IDLE, 0) == total:
            told.append(self._finished(target, total, now))
        return told

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


def _newer_than_all(version: str, known: set[str]) -> bool:
    """A node that joins on an older (or a known) version starts no rollout; only a newer one
    can (compared by semver when they are versions)."""
    if not is_version(version):
        return version not in known
    return all(not is_version(k) or compare_versions(version, k) > 0 for k in known)


def _highest(versions: list[str]) -> str:
    """The highest of the new versions (by semver when all are versions, else by name)."""
    if all(is_version(v) for v in versions):
        best = versions[0]
        for version in versions[1:]:
            if compare_versions(version, best) > 0:
                best = version
        return best
    return max(versions)
