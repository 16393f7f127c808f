"""`brupop simulate` with a health gate of HTTP probes alone: each simulated node answers the
probe of its `{node_ip}` while it is healthy, so the others pass their gates; an
`--unhealthy` node refuses it from its reboot on, fails its gate on the probe, and halts the
fleet (node-03 starts last: node-02 and node-01 pass first).

It also runs with every host but node-01 answering its first call 15 s late
(`HOST_SPEEDS`): the same holds when agents report late."""

from __future__ import annotations

import pytest

from tests.e2e.simulate_run import HOST_SPEEDS, Simulate, explain, late_hosts

SPEC = """\
  haltAfterFailures: 1
  healthGate:
    timeoutSeconds: 5
    requireNodeReady: false
    requireDaemonSetPodsReady: false
    requireEvictedWorkloadsRecovered: false
    httpProbes:
      - url: "http://{node_ip}:10256/healthz"
        expectStatus: 200
        timeoutSeconds: 2
"""


@pytest.mark.e2e
@HOST_SPEEDS
def test_healthy_nodes_pass_their_probe_and_an_unhealthy_one_fails_it_and_halts(
    simulate: Simulate, late: bool
) -> None:
    run = simulate(
        "--nodes", "3", "--max-concurrent", "1", "--unhealthy", "node-03", "--timeout", "100",
        *late_hosts(3, late=late), policy=SPEC,
    )  # fmt: skip

    assert run.returncode == 1, explain(run)
    assert run.last_line.startswith("HALTED ("), explain(run)
    assert (
        "node node-03 failed httpProbe[0]: GET http://10.0.0.13:10256/healthz failed: "
        "connection refused (expected 200)"
    ) in run.last_line
    gates = {node["name"]: node["health_gate"] for node in run.report["nodes"]}
    assert gates == {"node-01": "passed", "node-02": "passed", "node-03": "failed"}, explain(run)
    assert run.report["halt_reason"]["check"] == "httpProbe[0]"
