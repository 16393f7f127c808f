"""`brupop simulate --policy` says, before the fleet starts, which rules of the policy do nothing
over the simulated nodes, and that its alert gate is a stand-in that asks no Prometheus."""

from __future__ import annotations

import pytest

from tests.e2e.simulate_run import Simulate, explain

SPEC = """\
  canary:
    selector: "brupop.bottlerocket.aws/canary=true"
    soakSeconds: 1800
  alertGate:
    prometheusUrl: "http://prometheus.does-not-resolve.invalid:9090"
"""


@pytest.mark.e2e
def test_a_canary_selector_no_node_has_and_the_stand_in_alert_gate_are_each_one_line(
    simulate: Simulate,
) -> None:
    run = simulate("--nodes", "2", "--max-concurrent", "2", "--timeout", "100", policy=SPEC)

    assert run.returncode == 0, explain(run)
    said = [line.strip().split("  ", 1)[-1] for line in run.stdout.splitlines()]
    assert (
        "policy: spec.canary.selector: 'brupop.bottlerocket.aws/canary=true' picks none of the "
        "2 opted-in nodes: there are no canaries"
    ) in said, explain(run)
    stand_in = [line for line in said if line.startswith("policy: spec.alertGate.prometheusUrl:")]
    assert len(stand_in) == 1, explain(run)
    assert "is not asked; simulate's alert gate is a stand-in" in stand_in[0]
