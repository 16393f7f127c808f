"""Reading a Prometheus instant-query answer into firing alerts, whatever the body holds.

The body is the server's to choose: not JSON, JSON nested past any recursion limit, a `data`
that is a number, a list or a string, labels that are not strings, thousands of alerts. Each
such answer is an UnreadableAnswer with a short reason (and the alert gate then holds); only a
well-formed success gives alerts. Text taken from the answer (its `error`, alert names) is
bounded and cleaned of terminal controls before it goes anywhere.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from brupop.domain.printable import printable
from brupop.domain.safety.alert_gate import FiringAlert

ALERTS_MAX = 1000
LABELS_MAX = 64
LABEL_MAX_LENGTH = 1024  # a name or value longer than this is not a label Prometheus keeps
ERROR_SHOWN_MAX = 120  # how much of the answer's `error` a reason repeats


class UnreadableAnswer(Exception):
    """The answer gives no alerts; the message says why in a few words."""


def error_clause(body: bytes) -> str:
    """` (<the answer's error>)` when the body is a JSON object with an `error` text; ""."""
    data = _json(body)
    if isinstance(data, Mapping) and isinstance(data.get("error"), str) and data["error"]:
        return f" ({printable(data['error'], ERROR_SHOWN_MAX)})"
    return ""


def firing_alerts(body: bytes) -> list[FiringAlert]:
    """The alerts of a successful vector answer; UnreadableAnswer for anything else."""
    data = _json(body)
    if data is _NOT_JSON:
        raise UnreadableAnswer("the answer is not JSON")
    if not isinstance(data, Mapping) or data.get("status") != "success":
        raise UnreadableAnswer(f"the query did not succeed{error_clause(body)}")
    inner = data.get("data")
    result = inner.get("result") if isinstance(inner, Mapping) else None
    if not isinstance(result, list):
        raise UnreadableAnswer("the answer has no result list")
    if len(result) > ALERTS_MAX:
        raise UnreadableAnswer(f"more than {ALERTS_MAX} alerts fire")
    return [_alert(series) for series in result]


def _alert(series: object) -> FiringAlert:
    labels = series.get("metric") if isinstance(series, Mapping) else None
    if (
        not isinstance(labels, Mapping)
        or len(labels) > LABELS_MAX
        or not all(
            isinstance(key, str)
            and isinstance(value, str)
            and len(key) <= LABEL_MAX_LENGTH
            and len(value) <= LABEL_MAX_LENGTH
            for key, value in labels.items()
        )
    ):
        raise UnreadableAnswer("an alert's labels cannot be read")
    return FiringAlert(name=labels.get("alertname", ""), labels=dict(labels))


_NOT_JSON: Any = object()


def _json(body: bytes) -> Any:
    """The decoded body, or _NOT_JSON (bad bytes, bad syntax, nesting too deep, huge numbers)."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return _NOT_JSON
