"""AlertSource behaviour, the same for the in-memory source and for a REAL Prometheus server
(started on loopback, scraping a metric this test serves, with an alert rule that fires on it).

Through `read_alert_gate`, as the controller asks: a firing alert holds, a resolved one
releases, an unreachable server holds with its reason (fail closed).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

import pytest

from brupop.adapters.http.prometheus import PrometheusAlertSource
from brupop.adapters.memory.gates import InMemoryAlertSource, Reach
from brupop.domain.policy.address_allowance import AddressAllowance
from brupop.domain.policy.update_policy import AlertGateSpec
from brupop.domain.safety.alert_gate import FiringAlert
from brupop.ports.monitoring.alert_source import AlertSource
from brupop.services.controller.safety.alert_gate_reader import read_alert_gate
from tests.support.alerting_prometheus import AlertingPrometheus
from tests.support.loopback_reach import LOOPBACK_ALLOWANCE, loopback_http
from tests.support.polling import wait_until

ALERT = "BrupopTestAlert"
NOISE = "BrupopTestNoise"
CLOSED = "http://127.0.0.1:1"
PROMETHEUS_SECONDS = 45.0  # scrape, rule evaluation and alert state, each every second
POLL_SECONDS = 0.2  # each poll is an HTTP query to Prometheus


class AlertBackend(Protocol):
    """An alert source and the means to make alerts fire at it."""

    source: AlertSource
    url: str

    def fire(self, severity: str) -> None: ...
    def fire_noise(self) -> None: ...
    def resolve(self) -> None: ...


class MemoryAlerts:
    def __init__(self) -> None:
        self.memory = InMemoryAlertSource(Reach(AddressAllowance.parse(LOOPBACK_ALLOWANCE)))
        self.source: AlertSource = self.memory
        self.url = "http://prometheus.monitoring:9090"
        self.memory.serve(self.url)

    def fire(self, severity: str) -> None:
        self.memory.serve(self.url, FiringAlert(ALERT, {"alertname": ALERT, "severity": severity}))

    def fire_noise(self) -> None:
        self.memory.serve(self.url, FiringAlert(NOISE, {"alertname": NOISE}))

    def resolve(self) -> None:
        self.memory.serve(self.url)


class RealPrometheus:
    def __init__(self, server: AlertingPrometheus) -> None:
        self.server = server
        self.source: AlertSource = PrometheusAlertSource(loopback_http())
        self.url = server.url

    def fire(self, severity: str) -> None:
        self.server.set_triggers({severity: 1})

    def fire_noise(self) -> None:
        self.server.set_triggers(noise=1)

    def resolve(self) -> None:
        self.server.set_triggers()


@pytest.fixture(scope="module")
def prometheus() -> Iterator[AlertingPrometheus]:
    with AlertingPrometheus() as server:
        yield server


@pytest.fixture(params=["memory", "prometheus"])
def alerts(request: pytest.FixtureRequest) -> Iterator[AlertBackend]:
    if request.param == "memory":
        yield MemoryAlerts()
        return
    server: AlertingPrometheus = request.getfixturevalue("prometheus")
    backend = RealPrometheus(server)
    backend.resolve()
    _settle_quiet(backend)
    yield backend
    backend.resolve()


def _gate(url: str, matchers: tuple[str, ...] = (), ignore: tuple[str, ...] = ()) -> AlertGateSpec:
    return AlertGateSpec(prometheus_url=url, matchers=matchers, ignore=ignore)


def _settle_quiet(backend: AlertBackend) -> None:
    wait_until(
        lambda: not read_alert_gate(backend.source, _gate(backend.url)).holds,
        "no alert to fire",
        seconds=PROMETHEUS_SECONDS,
        interval=POLL_SECONDS,
    )


def test_nothing_firing_releases(alerts: AlertBackend) -> None:
    state = read_alert_gate(alerts.source, _gate(alerts.url))

    assert not state.holds and state.reason is None


def test_a_firing_alert_holds_and_its_resolution_releases(alerts: AlertBackend) -> None:
    gate = _gate(alerts.url, matchers=('severity="critical"',))

    alerts.fire("critical")
    wait_until(
        lambda: read_alert_gate(alerts.source, gate).holds,
        "the alert to fire",
        seconds=PROMETHEUS_SECONDS,
        interval=POLL_SECONDS,
    )
    held = read_alert_gate(alerts.source, gate)
    alerts.resolve()
    wait_until(
        lambda: not read_alert_gate(alerts.source, gate).holds,
        "the alert to resolve",
        seconds=PROMETHEUS_SECONDS,
        interval=POLL_SECONDS,
    )

    assert [alert.name for alert in held.firing] == [ALERT]
    assert held.firing[0].labels["severity"] == "critical"
    assert held.reason == f"alert firing: {ALERT}"


def test_an_alert_the_matchers_do_not_select_does_not_hold(alerts: AlertBackend) -> None:
    everything = _gate(alerts.url)
    critical_only = _gate(alerts.url, matchers=('severity=~"crit.*"', 'alertname!=""'))

    alerts.fire("warning")
    wait_until(
        lambda: read_alert_gate(alerts.source, everything).holds,
        "the warning to fire",
        seconds=PROMETHEUS_SECONDS,
        interval=POLL_SECONDS,
    )

    assert not read_alert_gate(alerts.source, critical_only).holds


def test_an_ignored_alert_name_does_not_hold(alerts: AlertBackend) -> None:
    everything = _gate(alerts.url)

    alerts.fire_noise()
    wait_until(
        lambda: read_alert_gate(alerts.source, everything).holds,
        "the noise to fire",
        seconds=PROMETHEUS_SECONDS,
        interval=POLL_SECONDS,
    )

    assert not read_alert_gate(alerts.source, _gate(alerts.url, ignore=(NOISE,))).holds


def test_an_unreachable_source_holds_with_its_reason(alerts: AlertBackend) -> None:
    state = read_alert_gate(alerts.source, _gate(CLOSED))

    assert state.holds and not state.firing
    assert state.reason == (
        f"Prometheus cannot be asked ({CLOSED}: connection refused); holding until it answers"
    )


def test_no_alert_gate_never_holds(alerts: AlertBackend) -> None:
    alerts.fire("critical")

    assert not read_alert_gate(alerts.source, None).holds
