"""Pre-staging for real: simulated hosts prepare their version before the window opens, at most
`maxConcurrent` at once, and a node in its turn then only activates; a pause in the middle of
staging leaves no host activated and starts no further preparation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.simulate_run import SimulateRun, run_simulate
from tests.support.policy_file import write_policy_file

WINDOW = '  windows:\n    - cron: "* * 2-4 * * * *"\n'
PRESTAGE = "  prestage:\n    enabled: true\n    maxConcurrent: 2\n"
TIMEOUTS = ("--timeout-staged", "90", "--timeout-idle", "60", "--host-command-deadline", "60")


def _steps(run: SimulateRun, node: str) -> list[str]:
    """The node's agent's prepare and activate steps and its turn's start, in order."""
    seen = []
    for event in run.agent_events(node):
        if event.get("event") == "update.step" and event.get("step") in ("prepare", "activate"):
            seen.append(str(event["step"]))
        elif (
            event.get("event") == "update.drift"
            and event.get("desired_state") == "StagedAndPerformedUpdate"
        ):
            seen.append("turn")
    return seen


def _host_lines(work: Path) -> list[dict[str, Any]]:
    lines = []
    for log in sorted(work.glob("nodes/*/host/host.log")):
        lines += [json.loads(t) for t in log.read_text().splitlines() if t.startswith("{")]
    return lines


def _most_prepares_at_once(work: Path) -> int:
    edges = sorted(
        (line["time"], 1 if line["event"] == "command.started" else -1)
        for line in _host_lines(work)
        if line.get("command") == "prepare"
    )
    running = peak = 0
    for _, step in edges:
        running += step
        peak = max(peak, running)
    return peak


@pytest.mark.e2e
def test_staged_nodes_prepare_before_the_window_two_at_a_time_and_only_activate_in_it(
    tmp_path: Path,
) -> None:
    policy = write_policy_file(tmp_path, WINDOW + PRESTAGE)
    work = tmp_path / "work"

    run = run_simulate(
        tmp_path, "--nodes", "4", "--max-concurrent", "1", "--host-prepare", "2",
        "--start-at", "2026-11-30T01:59:15Z", "--settle-seconds", "60", "--timeout", "140",
        "--work-dir", str(work), "--policy", policy, *TIMEOUTS,
    )  # fmt: skip

    assert run.last_line.startswith("OK: 4/4 nodes updated"), run.stdout[-2000:]
    for node in ("node-01", "node-02", "node-03", "node-04"):
        assert _steps(run, node) == ["prepare", "turn", "activate"], node
    assert _most_prepares_at_once(work) == 2


@pytest.mark.e2e
def test_a_pause_mid_staging_leaves_no_host_activated_and_begins_no_preparation(
    tmp_path: Path,
) -> None:
    policy = write_policy_file(tmp_path, WINDOW + PRESTAGE)
    work = tmp_path / "work"

    run = run_simulate(
        tmp_path, "--nodes", "4", "--max-concurrent", "1", "--host-prepare", "6",
        "--start-at", "2026-11-30T02:00:00Z", "--pause-at", "1", "--settle-seconds", "20",
        "--timeout", "140", "--work-dir", str(work), "--policy", policy, *TIMEOUTS,
    )  # fmt: skip

    assert run.last_line.startswith("FAILED (0/4 nodes updated)"), run.stdout[-2000:]
    states = [
        (json.loads(f.read_text()).get("update_status") or {}).get("update_state")
        for f in work.glob("nodes/*/host/state.json")
    ]
    assert "Ready" not in states, states
    prepares = [line for line in _host_lines(work) if line.get("command") == "prepare"]
    assert len([p for p in prepares if p["event"] == "command.started"]) <= 2
