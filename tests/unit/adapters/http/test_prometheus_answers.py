"""PrometheusAlertSource on recorded answers: the query it sends, and every unreadable answer
turned into an AlertSourceError with a short reason (so the alert gate holds)."""

from __future__ import annotations

import json
import re

import pytest

from brupop.adapters.http.prometheus import ALERTS_MAX, PrometheusAlertSource, alerts_query
from brupop.domain.policy.alert_matcher import parse_alert_matcher
from brupop.ports.monitoring.alert_source import AlertSourceError
from tests.support.loopback_reach import loopback_http
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
        alerts = PrometheusAlertSource(loopback_http()).firing(server.base_url, [], ["Noise"], 5)
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
        ((200, b'{"status":"success","data":1}'), "no result list"),
        ((200, b'{"status":"success","data":[1]}'), "no result list"),
        ((200, b'{"status":"success","data":"x"}'), "no result list"),
        ((200, b"[" * 100_000 + b"]" * 100_000), "not JSON"),
        ((200, b'{"status":"success","data":{"result":[{"metric":{"a":1}}]}}'), "labels"),
        ((500, b'{"error":"\\u001b]0;owned\\u0007boom"}'), "HTTP 500 (boom)"),
    ],
)
def test_an_unreadable_answer_is_an_error_with_a_reason(
    answer: tuple[int, bytes], reason: str
) -> None:
    with ProbeServer() as server:
        server.answers[QUERY] = answer
        with pytest.raises(AlertSourceError, match=re.escape(reason)):
            PrometheusAlertSource(loopback_http()).firing(server.base_url, [], [], 5)


def test_an_answer_larger_than_the_cap_is_refused() -> None:
    with ProbeServer() as server:
        server.answers[QUERY] = (200, _vector(*({"alertname": "A" * 100} for _ in range(50))))
        with pytest.raises(AlertSourceError, match="larger than 1000 bytes"):
            PrometheusAlertSource(loopback_http(), max_bytes=1000).firing(
                server.base_url, [], [], 5
            )


def test_the_reason_repeats_a_bounded_error_without_terminal_controls() -> None:
    hostile = "\x1b]52;c;cm0=\x07\r\x1b[2Kall nodes healthy" + "x" * 5000
    with ProbeServer() as server:
        server.answers[QUERY] = (422, json.dumps({"error": hostile}).encode())
        with pytest.raises(AlertSourceError) as refused:
            PrometheusAlertSource(loopback_http()).firing(server.base_url, [], [], 5)

    reason = str(refused.value)
    assert "\x1b" not in reason and "\r" not in reason
    assert "all nodes healthy" in reason and len(reason) < 300


def test_alert_names_are_shown_without_terminal_controls() -> None:
    with ProbeServer() as server:
        server.answers[QUERY] = (200, _vector({"alertname": "Disk\x1b]0;t\x07Full\u202e"}))
        alerts = PrometheusAlertSource(loopback_http()).firing(server.base_url, [], [], 5)

    assert [alert.name for alert in alerts] == ["DiskFull"]


def test_the_default_policy_refuses_a_prometheus_on_loopback() -> None:
    with ProbeServer() as server:
        server.answers[QUERY] = (200, _vector())
        with pytest.raises(AlertSourceError, match=r"refused: 127\.0\.0\.1 is a loopback address"):
            PrometheusAlertSource().firing(server.base_url, [], [], 5)
        assert server.requests == []
