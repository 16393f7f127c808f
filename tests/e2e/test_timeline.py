"""`brupop simulate --timeline`: the picture of a run with a failure and a pause, one row per
node. The pause creates a policy object that changes nothing but `paused` and the resume deletes
it, so the failed node backs off as without a pause and the title says FAILED. A health gate's
halt is drawn in test_health_gate_halt.py."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from tests.e2e.simulate_run import Simulate, explain

SVG_TEXT = "{http://www.w3.org/2000/svg}text"


@pytest.mark.e2e
def test_a_run_with_a_failure_and_a_pause_draws_one_row_per_node_and_marks_both(
    simulate: Simulate,
    tmp_path: Path,
) -> None:
    picture = tmp_path / "timeline.svg"
    run = simulate(
        "--nodes", "3", "--fault", "node-03=prepare", "--timeline", str(picture),
        "--pause-at", "1", "--resume-at", "3",
    )  # fmt: skip

    assert run.returncode == 1, explain(run)
    assert f"timeline: {picture}" in run.stdout
    texts = ["".join(e.itertext()) for e in ElementTree.parse(picture).iter(SVG_TEXT)]
    labels = [text for text in texts if text.startswith("node-")]
    assert labels == ["node-01", "node-02", "node-03"], texts
    assert "agent failed in staging (crash count 1)" in texts, texts
    # node-02 goes first (the cheapest: no cache pod), then node-01, then node-03 fails.
    legends = ("staging", "drain", "reboot", "monitoring", "updated", "backoff", "failure")
    for legend in legends:
        assert legend in texts, texts
    assert any(text.startswith("brupop simulate: 3 nodes") and "FAILED" in text for text in texts)
    assert "fleet paused" in texts and "fleet resumed" in texts, texts
