"""The `brupop status` table, from `/status` rows (plain dicts) or from NodeReports in-process."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from brupop.domain.printable import printable
from brupop.domain.reporting.waiting_reason import NodeReport

COLUMNS = (
    ("NODE", "node"),
    ("STATE", "state"),
    ("VERSION", "version"),
    ("TARGET STATE", "target_state"),
    ("TARGET VERSION", "target_version"),
    ("CRASH COUNT", "crash_count"),
    ("REASON", "detail"),
)


def format_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """Left-aligned columns separated by three spaces, as kubectl prints them."""
    if not rows:
        return "No BottlerocketShadows found."
    cells = [[title for title, _ in COLUMNS]]
    cells += [[_cell(row.get(key)) for _, key in COLUMNS] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS) - 1)]
    lines = []
    for line in cells:
        padded = [value.ljust(width) for value, width in zip(line, widths, strict=False)]
        lines.append("   ".join([*padded, line[-1]]).rstrip())
    return "\n".join(lines)


def format_reports(reports: Iterable[NodeReport]) -> str:
    """The same table for NodeReports computed in this process."""
    return format_table([report.as_json() for report in reports])


def _cell(value: Any) -> str:
    """The value as it may be shown: from the cluster, so cleaned before the widths are taken."""
    return "" if value is None else printable(str(value))
