"""`brupop simulate --policy ... --unhealthy NODE`: after its reboot NODE stays NotReady, its
health gate times out, the fleet halts, no node starts after the failure, nothing is left
cordoned, and the exit code and the last line say why; its `--timeline` picture has one row
per node and marks the failure and the halt. The same holds when every host but the first
answers its first call 15 s late (`--late-host`).

Nothing here depends on how fast this machine is: the moments compared are those the run
recorded (each node's first departure from Idle and its return, as the observer saw them)."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.simulate_run import HOST_SPEEDS, Simulate, explain, late_hosts

SVG_TEXT = "{http://www.w3.org/2000/svg}text"
SPEC = """\
  haltAfterFailures: 1
  healthGate:
    timeoutSeconds: 3
"""


@pytest.mark.e2e
@HOST_SPEEDS
def test_an_unhealthy_node_fails_its_gate_and_the_fleet_halts_with_nothing_cordoned(
    simulate: Simulate,
    tmp_path: Path,
    late: bool,
) -> None:
    picture = tmp_path / "timeline.svg"
    run = simulate(
        "--nodes", "4", "--max-concurrent", "1", "--unhealthy", "node-02", "--timeout", "100",
        "--timeline", str(picture), *late_hosts(4, late=late), policy=SPEC,
    )  # fmt: skip

    assert run.returncode == 1, explain(run)
    report = run.report
    assert report["halted"] is True
    assert report["halt_reason"]["node"] == "node-02"
    assert report["halt_reason"]["check"] == "nodeReady"
    assert report["policy_phase"] == "Halted"
    nodes: dict[str, dict[str, Any]] = {n["name"]: n for n in report["nodes"]}
    failed = nodes["node-02"]
    assert failed["health_gate"] == "failed"
    assert failed["final_version"] == "1.20.0", "no rollback: it stays on the new version"
    for name, node in nodes.items():
        assert node["unschedulable"] is False, f"{name} left cordoned"
        if node["started_at"] is not None and name != "node-02":
            assert node["health_gate"] == "passed", node
            assert node["started_at"] < failed["finished_at"], f"{name} started after the halt"
    assert run.last_line.startswith("HALTED ("), explain(run)
    assert "node node-02 failed nodeReady" in run.last_line

    texts = ["".join(e.itertext()) for e in ElementTree.parse(picture).iter(SVG_TEXT)]
    assert [t for t in texts if t.startswith("node-")] == [f"node-0{i}" for i in range(1, 5)]
    assert any(t.startswith("fleet halted") for t in texts), texts
    assert "failure" in texts, texts
