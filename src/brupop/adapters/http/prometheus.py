"""PrometheusAlertSource: the AlertSource port over the Prometheus HTTP API.

It asks for `ALERTS{alertstate="firing", <matchers>}` with an instant query, so Prometheus (with
its RE2 engine) evaluates the policy's matchers, and drops ignored alert names itself. Every
answer is bounded: the exchange by a timeout, the body by a size cap, the alerts by a count.
Anything but a readable success (unreachable, an HTTP error, a PromQL error, a body too big)
is an AlertSourceError with a short reason, and the alert gate holds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from brupop.adapters.http.bounded_get import BoundedGetError, bounded_get
from brupop.domain.policy.alert_matcher import AlertMatcher
from brupop.domain.safety.alert_gate import FiringAlert
from brupop.ports.alert_source import AlertSource, AlertSourceError

QUERY_PATH = "/api/v1/query"
ANSWER_MAX_BYTES = 1024 * 1024
ALERTS_MAX = 1000
LABELS_MAX = 64


def alerts_query(matchers: Sequence[AlertMatcher]) -> str:
    """The PromQL selector of firing alerts that satisfy every matcher."""
    terms = ['alertstate="firing"', *(str(matcher) for matcher in matchers)]
    return "ALERTS{" + ",".join(terms) + "}"


class PrometheusAlertSource:
    """Asks a Prometheus server which alerts fire."""

    def __init__(self, timeout_seconds: float = 5.0, max_bytes: int = ANSWER_MAX_BYTES) -> None:
        self._timeout = timeout_seconds
        self._max_bytes = max_bytes

    def firing(
        self, source_url: str, matchers: Sequence[AlertMatcher], ignore: Sequence[str]
    ) -> tuple[FiringAlert, ...]:
        url = (
            source_url.rstrip("/") + QUERY_PATH + "?" + urlencode({"query": alerts_query(matchers)})
        )
        try:
            answer = bounded_get(url, self._timeout, limit=self._max_bytes)
        except BoundedGetError as error:
            raise AlertSourceError(f"{source_url}: {error}") from None
        if answer.truncated:
            raise AlertSourceError(f"{source_url}: answer larger than {self._max_bytes} bytes")
        if answer.status != 200:
            raise AlertSourceError(f"{source_url}: HTTP {answer.status}{_error_of(answer.body)}")
        ignored = frozenset(ignore)
        alerts = [alert for alert in _alerts(source_url, answer.body) if alert.name not in ignored]
        return tuple(sorted(alerts, key=lambda alert: alert.name))


def _error_of(body: bytes) -> str:
    try:
        data = json.loads(body)
    except ValueError:
        return ""
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return f" ({data['error'][:200]})"
    return ""


def _alerts(source_url: str, body: bytes) -> list[FiringAlert]:
    try:
        data: Any = json.loads(body)
    except ValueError:
        raise AlertSourceError(f"{source_url}: the answer is not JSON") from None
    if not isinstance(data, dict) or data.get("status") != "success":
        raise AlertSourceError(f"{source_url}: the query did not succeed{_error_of(body)}")
    result = (data.get("data") or {}).get("result")
    if not isinstance(result, list):
        raise AlertSourceError(f"{source_url}: the answer has no result list")
    if len(result) > ALERTS_MAX:
        raise AlertSourceError(f"{source_url}: more than {ALERTS_MAX} alerts fire")
    alerts = []
    for series in result:
        labels = series.get("metric") if isinstance(series, dict) else None
        if not isinstance(labels, dict) or len(labels) > LABELS_MAX:
            raise AlertSourceError(f"{source_url}: an alert's labels cannot be read")
        clean = {str(k): str(v) for k, v in labels.items()}
        alerts.append(FiringAlert(name=clean.get("alertname", ""), labels=clean))
    return alerts


_: type[AlertSource] = PrometheusAlertSource
