"""`karpenter.sh/do-not-disrupt` on a pod, as Karpenter (v1.12 on) reads it: `"true"` protects
the pod without end; a duration such as `"4h"` or `"1h30m"` (Go's form) protects it for that
long from its creation. A pod whose creation time is unknown is protected without end. Any
other value (`"false"`, `"0s"`, a typo) protects nothing, as brupop always read it: Karpenter
itself treats a value it cannot read as `"true"`.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import NamedTuple

_UNIT_SECONDS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_LONGEST_SECONDS = 290 * 365 * 86400.0  # about Go's largest duration
DURATION_TEXT_MAX = 64


class Protection(NamedTuple):
    """Whether the annotation protects its pod, and until when (None: without end)."""

    protects: bool
    until: datetime | None = None

    def holds_at(self, now: datetime) -> bool:
        """The pod is still protected at `now`."""
        return self.protects and (self.until is None or now < self.until)


NONE = Protection(False)
WITHOUT_END = Protection(True)


def protection(value: str | None, created_at: datetime | None) -> Protection:
    """What the annotation's `value` protects, for a pod created at `created_at`."""
    if value == "true":
        return WITHOUT_END
    seconds = duration_seconds(value) if value is not None else None
    if seconds is None or seconds <= 0:
        return NONE
    if created_at is None:
        return WITHOUT_END
    return Protection(True, created_at + timedelta(seconds=seconds))


def duration_seconds(text: str) -> float | None:
    """A Go duration (`4h`, `1h30m`, `1.5h`, `-30m`) in seconds; None when it is not one."""
    if not text or len(text) > DURATION_TEXT_MAX:
        return None
    sign = -1.0 if text[0] == "-" else 1.0
    body = text[1:] if text[0] in "+-" else text
    if body == "0":
        return 0.0
    total, position = 0.0, 0
    while position < len(body):
        match = _PART.match(body, position)
        if match is None:
            return None
        total += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        position = match.end()
    if position == 0 or total > _LONGEST_SECONDS:
        return None
    return sign * total
