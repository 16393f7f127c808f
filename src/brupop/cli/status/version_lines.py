"""The lines of `brupop status` about versions that wait: one per offered version the policy's
`version` section holds, saying when it becomes eligible (or the pin that holds it).

They come from the `versions` list of the controller's `/status` (each recorded version with
its first-seen time, eligibility, the nodes offered it and what holds them). A controller
that does not send the list (an older one) gives no lines; an entry missing a field is shown
with what it has.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

RELEASE_TOO_NEW = "release_too_new"


def version_lines(entries: object) -> list[str]:
    """`Version 1.21.0 (3 nodes): eligible at ... (first offered ...)` for each waiting one."""
    if not isinstance(entries, list):
        return []
    return [_line(entry) for entry in entries if _waits(entry)]


def _waits(entry: object) -> bool:
    if not isinstance(entry, Mapping):
        return False
    nodes = entry.get("nodes")
    return bool(entry.get("waiting")) and isinstance(nodes, int) and nodes > 0


def _line(entry: Mapping[str, Any]) -> str:
    nodes = entry["nodes"]
    head = f"Version {entry.get('version', '?')} ({nodes} node{'s' if nodes != 1 else ''})"
    if entry.get("reason") == RELEASE_TOO_NEW and entry.get("eligible_at"):
        first = entry.get("first_seen") or "-"
        return f"{head}: eligible at {entry['eligible_at']} (first offered {first})"
    return f"{head}: {entry['waiting']}"
