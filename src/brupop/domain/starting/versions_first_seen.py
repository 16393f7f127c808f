"""When each version was first offered by a quorum of hosts: the start of its release age.

The controller notes, pass after pass, the versions hosts are offered (`RolloutBook.targets`)
by at least the release-age quorum (`release_quorum`): such a version not seen before gets the
pass's time, and that time never moves while the quorum keeps reporting the version. A version
reported by fewer nodes (none included) loses its time: its age starts again when a quorum
reports it, so a time one node planted (before the quorum rule, or by a version the fleet
left) never counts. The record is kept in the policy status (`versionsFirstSeen`), so a
restarted controller or a new leader reads it back and merges it with what it noted itself
(the earlier time of a version wins). At most `VERSIONS_SEEN_MAX` are kept; beyond that the
oldest go first, those no host is offered any more before those still offered.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from datetime import datetime

from brupop.domain.policy.update_policy_status import (
    VERSION_MAX_LENGTH,
    VERSIONS_SEEN_MAX,
    VersionSeen,
)
from brupop.domain.starting.release_quorum import VersionQuorum

VersionsSeen = tuple[VersionSeen, ...]
"""First-seen times, oldest first (ties by version), as the policy status lists them."""


def note_offered(
    seen: VersionsSeen,
    offered: Iterable[str],
    now: datetime,
    *,
    limit: int = VERSIONS_SEEN_MAX,
) -> VersionsSeen:
    """`seen` with every version of `offered` it lacks first seen at `now`, bounded to
    `limit`; `seen` itself when nothing was added. A version longer than the status can hold
    (a shadow's has no bound) is not noted: it stays as young as can be."""
    known = {entry.version for entry in seen}
    offered = set(offered)
    new = sorted(v for v in offered - known if len(v) <= VERSION_MAX_LENGTH)
    if not new:
        return seen
    added = seen + tuple(VersionSeen(version=v, at=now) for v in new)
    return _bounded(_ordered(added), offered, limit)


def note_at_quorum(
    seen: VersionsSeen,
    quorum: VersionQuorum,
    now: datetime,
    *,
    limit: int = VERSIONS_SEEN_MAX,
) -> VersionsSeen:
    """`seen` kept to the versions `quorum` reaches, with those it lacks noted at `now`;
    `seen` itself when nothing changed, or when no node reports anything (an empty view)."""
    if not quorum.visible:
        return seen
    kept = tuple(entry for entry in seen if quorum.reached(entry.version))
    return note_offered(
        seen if len(kept) == len(seen) else kept, quorum.versions(), now, limit=limit
    )


def merge_seen(
    mine: VersionsSeen,
    shown: VersionsSeen,
    offered: Collection[str] = (),
    *,
    limit: int = VERSIONS_SEEN_MAX,
) -> VersionsSeen:
    """What this replica noted merged with what the status shows: every version once, at the
    earlier of its two times, bounded to `limit` (versions in `offered` kept first)."""
    earliest: dict[str, VersionSeen] = {}
    for entry in (*mine, *shown):
        kept = earliest.get(entry.version)
        if kept is None or entry.at < kept.at:
            earliest[entry.version] = entry
    merged = _ordered(earliest.values())
    return mine if merged == mine else _bounded(merged, set(offered), limit)


def first_seen_times(seen: VersionsSeen) -> Mapping[str, datetime]:
    """The record as the version gate reads it: version to first-seen time."""
    return {entry.version: entry.at for entry in seen}


def _ordered(entries: Iterable[VersionSeen]) -> VersionsSeen:
    return tuple(sorted(entries, key=lambda e: (e.at, e.version)))


def _bounded(seen: VersionsSeen, offered: Collection[str], limit: int) -> VersionsSeen:
    """The newest `limit` entries, dropping the oldest unoffered versions before any offered
    one (dropping an offered version would note it again, as new, on the next pass)."""
    excess = len(seen) - limit
    if excess <= 0:
        return seen
    unoffered = [entry for entry in seen if entry.version not in offered]
    dropped = {entry.version for entry in unoffered[:excess]}
    kept = [entry for entry in seen if entry.version not in dropped]
    return tuple(kept[len(kept) - limit :])
