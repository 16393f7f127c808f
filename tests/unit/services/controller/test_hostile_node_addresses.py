"""HealthChecks over Nodes whose addresses their (possibly compromised) kubelets wrote: any
InternalIP is a probe that waits with a reason, never an exception, and never a URL of the
kubelet's choosing; probe errors reach the detail bounded and without terminal controls."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.memory.gates import InMemoryHttpProber
from brupop.domain.policy.update_policy import HealthGateSpec, HttpProbeSpec
from brupop.domain.safety.gate_checks import ProbeAnswer
from brupop.domain.safety.health_gate import CheckOutcome
from brupop.services.controller.safety.health_checks import UNPROBED, HealthChecks
from tests.fakes.clock import FakeClock

GATE = HealthGateSpec(
    require_node_ready=False,
    require_daemon_set_pods_ready=False,
    require_evicted_workloads_recovered=False,
    http_probes=(HttpProbeSpec(url="http://{node_ip}:10256/healthz/{node_name}"),),
)
CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_names = itertools.count()


def _checks(cluster: InMemoryCluster, prober: InMemoryHttpProber) -> HealthChecks:
    return HealthChecks(
        nodes=cluster.nodes, pods=cluster.pods, workloads=cluster.workloads, prober=prober
    )


@pytest.mark.parametrize(
    "address", ["10.0.0.9:8080", "evil.example/#", "169.254.169.254/latest#", "10.0.0.9 x"]
)
def test_an_internal_ip_that_is_no_address_is_a_pending_probe_with_a_reason(
    address: str,
) -> None:
    cluster = InMemoryCluster(clock=FakeClock())
    cluster.add_node("n1", internal_ip=address)
    prober = InMemoryHttpProber()

    [result] = _checks(cluster, prober).run("n1", GATE)

    assert result.outcome is CheckOutcome.PENDING
    assert "cannot probe: the node's InternalIP" in result.detail
    assert "is not an IP address" in result.detail
    assert prober.probed == []


@settings(max_examples=300, deadline=1000)
@given(st.text(max_size=120))
def test_any_internal_ip_gives_a_result_and_probes_only_an_address(address: str) -> None:
    cluster = InMemoryCluster(clock=FakeClock())
    name = f"n{next(_names)}"
    cluster.add_node(name, internal_ip=address)
    prober = InMemoryHttpProber()

    [result] = _checks(cluster, prober).run(name, GATE)

    assert result.outcome in (CheckOutcome.PENDING, CheckOutcome.PASSED)
    assert CONTROLS.search(result.detail) is None
    for url in prober.probed:
        assert re.fullmatch(r"http://(\[[0-9a-f:.%\w]+\]|[0-9.]+):10256/healthz/n\d+", url), url


def test_a_probe_error_reaches_the_detail_bounded_and_without_controls() -> None:
    cluster = InMemoryCluster(clock=FakeClock())
    cluster.add_node("n1", internal_ip="10.0.0.1")
    prober = InMemoryHttpProber()
    hostile = "\x1b]0;owned\x07\r\x1b[2Kall nodes healthy\u202e" + "x" * 5000
    prober.answer("http://10.0.0.1:10256/healthz/n1", error=hostile)

    [result] = _checks(cluster, prober).run("n1", GATE)

    assert CONTROLS.search(result.detail) is None
    assert "all nodes healthy" in result.detail and len(result.detail) < 400


class TimedProber(InMemoryHttpProber):
    """Records the timeout each probe was given."""

    def __init__(self) -> None:
        super().__init__()
        self.timeouts: list[float] = []

    def probe(self, url: str, timeout_seconds: float) -> ProbeAnswer:
        self.timeouts.append(timeout_seconds)
        return super().probe(url, timeout_seconds)


def test_no_probe_waits_longer_than_the_time_left_and_none_runs_without_any() -> None:
    cluster = InMemoryCluster(clock=FakeClock())
    cluster.add_node("n1", internal_ip="10.0.0.1")
    probes = tuple(
        HttpProbeSpec(url=f"http://{{node_ip}}:{port}/", timeout_seconds=60) for port in (1, 2)
    )
    gate = GATE.model_copy(update={"http_probes": probes})
    prober = TimedProber()
    left = iter([2.5, 0.0])

    results = _checks(cluster, prober).run("n1", gate, seconds_left=lambda: next(left))

    assert prober.timeouts == [2.5]
    assert results[1].outcome is CheckOutcome.PENDING and results[1].detail == UNPROBED
