"""The lines of `brupop status` about scheduling, above the table: one per budget with its
groups in use, the update time finishBy expects and where it comes from (while finishBy is in
force), and the clock's hold on every start (a blackout, the windows, finishBy) while one is.

They come from the `scheduling` entry of the controller's `/status`. A controller that does
not send it (an older one) gives no lines; a part that is missing or malformed gives no line
of its own. A budget with many groups (one per node group, say) lists its full groups only,
at most `GROUPS_SHOWN`, and counts the rest.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple, TypeGuard

from brupop.domain.starting.budget_rule import short_name

GROUPS_SHOWN = 8


class _Group(NamedTuple):
    name: str
    in_use: int
    limit: int

    @property
    def full(self) -> bool:
        return self.in_use >= self.limit

    def __str__(self) -> str:
        return f"{self.name} {self.in_use}/{self.limit}"


def scheduling_lines(entry: object) -> list[str]:
    """`Budget zone: ...`, `Expected update time: ...` and `Starts held: ...`, as they apply."""
    if not isinstance(entry, Mapping):
        return []
    return [
        *budget_lines(entry.get("budgets")),
        *expected_lines(entry.get("expected_update")),
        *hold_lines(entry.get("hold")),
    ]


def budget_lines(entries: object) -> list[str]:
    """One line per budget, in the order the controller lists them."""
    if not isinstance(entries, list):
        return []
    budgets: dict[str, list[_Group]] = {}
    for entry in entries:
        read = _read_group(entry)
        if read is not None:
            budgets.setdefault(read[0], []).append(read[1])
    return [_budget_line(key, groups) for key, groups in budgets.items()]


def expected_lines(entry: object) -> list[str]:
    """`Expected update time: 22m (p90 of the last 20 updates)`, or `15m (no history yet)`;
    none while finishBy is not in force (no policy object, or `finishBy: false`): nothing
    then depends on it (the metric still shows it)."""
    if not isinstance(entry, Mapping) or entry.get("finish_by") is False:
        return []
    seconds, counted = entry.get("seconds"), entry.get("from_updates")
    if not _count(seconds) or not _count(counted):
        return []
    if counted == 0:
        source = "no history yet"
    else:
        source = f"p90 of the last {counted} updates" if counted > 1 else "the last update"
    return [f"Expected update time: {duration(seconds)} ({source})"]


def hold_lines(entry: object) -> list[str]:
    """`Starts held: blackout until ...` while the clock holds every start."""
    if not isinstance(entry, Mapping) or not isinstance(entry.get("detail"), str):
        return []
    return [f"Starts held: {entry['detail']}"]


def duration(seconds: int) -> str:
    """`45s`, `22m` (minutes rounded up, as REASON's `expected N min`) or `1h 5m`."""
    if seconds < 60:
        return f"{seconds}s"
    hours, minutes = divmod(math.ceil(seconds / 60), 60)
    if not hours:
        return f"{minutes}m"
    return f"{hours}h {minutes}m" if minutes else f"{hours}h"


def _budget_line(key: str, groups: list[_Group]) -> str:
    head = f"Budget {short_name(key)}"
    if len(groups) <= GROUPS_SHOWN:
        return f"{head}: {', '.join(map(str, groups))}"
    full = [g for g in groups if g.full]
    if not full:
        return f"{head} ({len(groups)} groups, none full)"
    shown = full[:GROUPS_SHOWN]
    rest = [f"{len(full) - len(shown)} more full"] if len(full) > len(shown) else []
    rest.append(f"{len(groups) - len(full)} not full")
    listed = ", ".join(map(str, shown))
    return f"{head} ({len(groups)} groups, {len(full)} full): {listed}; {', '.join(rest)}"


def _read_group(entry: object) -> tuple[str, _Group] | None:
    if not isinstance(entry, Mapping):
        return None
    fields: dict[str, Any] = {k: entry.get(k) for k in ("budget", "group", "in_use", "limit")}
    if not isinstance(fields["budget"], str) or not isinstance(fields["group"], str):
        return None
    if not _count(fields["in_use"]) or not _count(fields["limit"]):
        return None
    return fields["budget"], _Group(fields["group"], fields["in_use"], fields["limit"])


def _count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
