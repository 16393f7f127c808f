"""PrometheusAlertSource on recorded answers: the query it sends, and every unreadable answer
turned into an AlertSourceError with a short reason (so the alert gate holds)."""

from __future__ import annotations

import json
import re

import pytest

from brupop.adapters.http.prometheus import ALERTS_MAX, PrometheusAlertSource, alerts_query
from brupop.domain.policy.alert_matcher import parse_alert_matcher
from brupop.ports.alert_source import AlertSourceError
from tests.support.probe_server import ProbeServer

QUERY = "/api/v1/query"


def _vector(*labels: dict[str, str]) -> bytes:
    result = [{"metric": item, "value": [0, "1"]} for item in labels]
    return json.dumps(
        {"status": "success", "data": {"resultType": "vector", "result": result}}
    ).encode()


def test_the_query_selects_firing_alerts_with_every_matcher() -> None:
    matchers = [parse_alert_matcher('severity="critical"'), parse_alert_matcher('team=~"a|b"')]

    assert alerts_query(matchers) == 'ALERTS{alertstate="firing",severity="critical",team=~"a|b"}'


def test_firing_alerts_are_read_sorted_and_ignored_names_dropped() -> None:
    with ProbeServer() as server:
        server.answers[QUERY] = (
            200,
            _vector({"alertname": "Zeta"}, {"alertname": "Alpha"}, {"alertname": "Noise"}),
        )
        alerts = PrometheusAlertSource().firing(server.base_url, [], ["Noise"])
        sent = server.requests[-1]

    assert [alert.name for alert in alerts] == ["Alpha", "Zeta"]
    assert sent.startswith(QUERY + "?query=ALERTS%7Balertstate%3D%22firing%22%7D")


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ((400, b'{"status":"error","error":"parse error at char 9"}'), "HTTP 400 (parse error"),
        ((503, b"overloaded"), "HTTP 503"),
        ((200, b"<html>"), "not JSON"),
        ((200, b'{"status":"error","error":"timeout"}'), "did not succeed (timeout)"),
        ((200, b'{"status":"success","data":{}}'), "no result list"),
        ((200, _vector(*({"alertname": f"A{i}"} for i in range(ALERTS_MAX + 1)))), "more than"),
        ((200, b'{"status":"success","data":{"result":["x"]}}'), "labels cannot be read"),
    ],
)
def test_an_unreadable_answer_is_an_error_with_a_reason(
    answer: tuple[int, bytes], reason: str
) -> None:
    with ProbeServer() as server:
        server.answers[QUERY] = answer
        with pytest.raises(AlertSourceError, match=re.escape(reason)):
            PrometheusAlertSource().firing(server.base_url, [], [])


def test_an_answer_larger_than_the_cap_is_refused() -> None:
    with ProbeServer() as server:
        server.answers[QUERY] = (200, _vector(*({"alertname": "A" * 100} for _ in range(50))))
        with pytest.raises(AlertSourceError, match="larger than 1000 bytes"):
            PrometheusAlertSource(max_bytes=1000).firing(server.base_url, [], [])
