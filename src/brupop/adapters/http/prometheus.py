"""PrometheusAlertSource: the AlertSource port over the Prometheus HTTP API.

It asks for `ALERTS{alertstate="firing", <matchers>}` with an instant query, so Prometheus (with
its RE2 engine) evaluates the policy's matchers, and drops ignored alert names itself. Every
answer is bounded: the exchange by the caller's deadline, the body by a size cap, the alerts by
a count. Anything but a readable success (refused by the address allowance, unreachable, an HTTP
error, a PromQL error, a body too big or of any odd shape) is an AlertSourceError with a short
reason free of terminal controls, and the alert gate holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlencode

from brupop.adapters.http.bounded_get import BoundedGet, BoundedGetError
from brupop.adapters.http.prometheus_answer import (
    ALERTS_MAX,
    UnreadableAnswer,
    error_clause,
    firing_alerts,
)
from brupop.domain.policy.alert_matcher import AlertMatcher
from brupop.domain.policy.probe_url import masked_url
from brupop.domain.printable import printable
from brupop.domain.safety.alert_gate import FiringAlert
from brupop.ports.monitoring.alert_source import AlertSource, AlertSourceError

QUERY_PATH = "/api/v1/query"
ANSWER_MAX_BYTES = 1024 * 1024
ALERT_NAME_SHOWN_MAX = 200
__all__ = ["ALERTS_MAX", "PrometheusAlertSource", "alerts_query"]


def alerts_query(matchers: Sequence[AlertMatcher]) -> str:
    """The PromQL selector of firing alerts that satisfy every matcher."""
    terms = ['alertstate="firing"', *(str(matcher) for matcher in matchers)]
    return "ALERTS{" + ",".join(terms) + "}"


class PrometheusAlertSource:
    """Asks a Prometheus server which alerts fire, where `http`'s address allowance allows."""

    def __init__(self, http: BoundedGet | None = None, max_bytes: int = ANSWER_MAX_BYTES) -> None:
        self._http = http if http is not None else BoundedGet()
        self._max_bytes = max_bytes

    def firing(
        self,
        source_url: str,
        matchers: Sequence[AlertMatcher],
        ignore: Sequence[str],
        timeout_seconds: float,
    ) -> tuple[FiringAlert, ...]:
        where = masked_url(source_url)
        query = urlencode({"query": alerts_query(matchers)})
        url = source_url.rstrip("/") + QUERY_PATH + "?" + query
        try:
            answer = self._http.get(url, timeout_seconds, limit=self._max_bytes)
        except BoundedGetError as error:
            raise AlertSourceError(f"{where}: {error}") from None
        if answer.truncated:
            raise AlertSourceError(f"{where}: answer larger than {self._max_bytes} bytes")
        if answer.status != 200:
            raise AlertSourceError(f"{where}: HTTP {answer.status}{error_clause(answer.body)}")
        try:
            alerts = firing_alerts(answer.body)
        except UnreadableAnswer as error:
            raise AlertSourceError(f"{where}: {error}") from None
        ignored = frozenset(ignore)
        shown = [
            FiringAlert(printable(alert.name, ALERT_NAME_SHOWN_MAX), alert.labels)
            for alert in alerts
            if alert.name not in ignored
        ]
        return tuple(sorted(shown, key=lambda alert: alert.name))


_: type[AlertSource] = PrometheusAlertSource
