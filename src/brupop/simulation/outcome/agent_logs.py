"""Reading the agents' log files after a run: tracebacks, and lines carrying a given event.

Agents log JSON lines (one object per line); a traceback shows up either as a JSON `exception`
field or as raw text from an uncaught error, and both contain Python's traceback header.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

TRACEBACK_HEADER = "Traceback (most recent call last)"
# The agent's warnings that explain why a node did not move on.
FAILURE_EVENTS = frozenset(
    {
        "update.step_failed",
        "update_check.failed",
        "host.unreadable",
        "cluster.unavailable",
        "cluster.refused",
    }
)


def count_tracebacks(paths: Iterable[Path]) -> int:
    """How many tracebacks all these files hold."""
    return sum(_read(path).count(TRACEBACK_HEADER) for path in paths)


def log_records(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects among the file's lines (other lines are skipped)."""
    for line in _read(path).splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            yield record


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def last_failure(path: Path, *, longest: int = 200) -> str:
    """The agent's last warning about a failure, as `event: Error: reason` (shortened)."""
    last = ""
    for record in log_records(path):
        if record.get("event") in FAILURE_EVENTS and record.get("level") in ("warning", "error"):
            last = f"{record['event']}: {record.get('error', 'error')}: {record.get('reason', '')}"
    return last if len(last) <= longest else last[: longest - 3] + "..."
