"""Which Idle nodes prepare their next version ahead of their turn, and which stop.

Pure: the controller hands in the prestage section, one candidate per node not in its turn,
whether the fleet is stopped (paused or halted) and whether the clock allows staging now. A
node prepares the version it is offered, as long as the version rules allow it (the pin, and
the release age: a version too young to start is too young to download); at most `maxConcurrent`
nodes prepare at once (a node counts from the spec naming a version until its status says the
host holds it, Staged). Stopped, disabled or pinned below: every spec naming a version is
cleared, so that no further preparation starts; so is one naming a version those rules hold.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import datetime, timedelta
from typing import NamedTuple

from brupop.domain.policy.prestage import Prestage
from brupop.domain.versions import compare_versions, is_version

STAGED = "Staged"


class PrestageCandidate(NamedTuple):
    """One node that is Idle and not in its turn, as the shadow shows it."""

    name: str
    current_version: str
    target_version: str
    asked: str | None
    """The version its spec asks it to prepare ahead (None: none)."""
    staged_version: str | None
    staged_state: str | None

    def holds(self, version: str) -> bool:
        """The host has prepared `version` and not activated it."""
        return self.staged_version == version and self.staged_state == STAGED


class PrestageWrite(NamedTuple):
    """A spec change: prepare `version` ahead (None: stop asking)."""

    name: str
    version: str | None


def may_stage_now(
    prestage: Prestage, now: datetime, *, window_open: bool, opens_at: datetime | None
) -> bool:
    """The clock allows preparing ahead: the window is open, or opens within `startBefore`
    (when the opening is unknown, any `startBefore` above 0 allows it)."""
    if window_open:
        return True
    ahead = timedelta(seconds=prestage.start_before_seconds)
    if opens_at is None:
        return ahead > timedelta(0)
    return opens_at - now <= ahead


def _wanted(candidate: PrestageCandidate, pin: str | None, held: Collection[str]) -> str | None:
    target = candidate.target_version
    if target == candidate.current_version or not is_version(target) or target in held:
        return None
    if pin is not None and is_version(pin) and compare_versions(target, pin) > 0:
        return None
    return target


def prestage_writes(
    prestage: Prestage | None,
    candidates: Iterable[PrestageCandidate],
    *,
    active: bool,
    pin: str | None,
    preparing_in_turn: int = 0,
    held: Collection[str] = (),
) -> list[PrestageWrite]:
    """The spec changes that bring the fleet's preparations in line; `active` is False while
    the fleet is paused or halted, or the clock does not allow staging. Nodes preparing in
    their turn (`preparing_in_turn`) share the downloads' places. `held`: the versions the
    version rules hold now (too young for the release age), which no node prepares."""
    enabled = prestage is not None and prestage.enabled and active
    limit = prestage.max_concurrent if prestage is not None else 0
    preparing = preparing_in_turn
    stale: list[str] = []
    waiting: list[tuple[str, str]] = []
    for candidate in sorted(candidates):
        wanted = _wanted(candidate, pin, held) if enabled else None
        asked = candidate.asked
        if asked is not None and asked != wanted:
            stale.append(candidate.name)
            asked = None
        if asked is not None and not candidate.holds(asked):
            preparing += 1
        elif asked is None and wanted is not None and not candidate.holds(wanted):
            waiting.append((candidate.name, wanted))
    chosen = dict(waiting[: max(limit - preparing, 0)])
    writes = [PrestageWrite(name, None) for name in stale if name not in chosen]
    return writes + [PrestageWrite(name, version) for name, version in chosen.items()]
