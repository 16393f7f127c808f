"""`brupop simulate --start-at` / `--clock-rate` for real: every process of the run (controller,
agents, host emulator) keeps one clock, and the clock walkthrough of docs/simulate.md ends as
the page says."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.e2e.simulate_run import SimulateRun, explain, run_simulate
from tests.support.doc_policies import DOCS, policy_examples


def _walkthrough() -> tuple[list[str], str]:
    """The clock example of docs/simulate.md: its command's flags and the verdict it promises."""
    text = (DOCS / "simulate.md").read_text(encoding="utf-8")
    section = text[text.index("For example, with the policy of [windows.md]") :]
    paragraph = " ".join(section[: section.index("\n\n")].split())
    command = re.search(r"`brupop simulate ([^`]*--policy FILE)`", paragraph)
    verdict = re.search(r"ends `([^`]*)`", paragraph)
    assert command is not None and verdict is not None
    return command[1].split(), verdict[1]


def _started(run: SimulateRun) -> list[str]:
    return [node["name"] for node in run.report["nodes"] if node["started_at"] is not None]


@pytest.mark.e2e
def test_the_clock_walkthrough_of_simulate_md_rolls_after_the_blackout_as_it_says(
    tmp_path: Path,
) -> None:
    flags, verdict = _walkthrough()
    example = next(e for e in policy_examples() if e.page == "windows.md")
    policy = tmp_path / "policy.yaml"
    policy.write_text(example.yaml, encoding="utf-8")

    run = run_simulate(tmp_path, *[str(policy) if flag == "FILE" else flag for flag in flags])

    assert run.last_line.startswith(verdict), explain(run)
    clock = run.report["clock"]
    assert clock["started_at"] == "2026-12-21T03:00:00+01:00"
    assert clock["ended_at"].startswith("2027-01-04T02:0"), clock
    assert clock["zone"] == "Europe/Paris"
    assert clock["fast_forward_seconds"] >= 334 * 3600
    reasons = {r["reason"] for r in run.node("node-01")["wait_reasons"]}
    assert "blackout" in reasons, run.node("node-01")["wait_reasons"]
    assert "clock: 2026-12-21T03:00:00+01:00 to 2027-01-04T02:0" in run.stdout


@pytest.mark.e2e
def test_agents_and_hosts_keep_the_runs_clock_when_it_starts_years_ago(tmp_path: Path) -> None:
    """A host stamping its records on the machine's clock would look, to an agent on the run's
    clock, as if it had answered long before it was asked: no command would ever finish."""
    work_dir = tmp_path / "work"

    run = run_simulate(
        tmp_path, "--nodes", "2", "--start-at", "2021-03-01T12:00Z", "--work-dir", str(work_dir)
    )

    assert run.returncode == 0, explain(run)
    assert run.last_line.startswith("OK: 2/2 nodes updated"), explain(run)
    assert run.report["clock"]["started_at"] == "2021-03-01T12:00:00+00:00"
    assert run.report["clock"]["fast_forward_seconds"] == 0
    assert _started(run) == ["node-01", "node-02"]
    state = json.loads((work_dir / "nodes" / "node-01" / "host" / "state.json").read_text())
    assert state["update_status"]["most_recent_command"]["timestamp"].startswith("2021-03-01T12:")


@pytest.mark.e2e
def test_without_a_fast_clock_a_release_age_holds_the_fleet_to_the_end(tmp_path: Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(
        "apiVersion: brupop.bottlerocket.aws/v1\nkind: BottlerocketUpdatePolicy\n"
        "metadata:\n  name: default\nspec:\n  version:\n    minReleaseAgeHours: 1\n",
        encoding="utf-8",
    )

    held = run_simulate(tmp_path / "held", "--nodes", "2", "--policy", str(policy))
    fast = run_simulate(
        tmp_path / "fast", "--nodes", "2", "--clock-rate", "3600", "--policy", str(policy)
    )

    assert held.last_line.startswith("FAILED (0/2 nodes updated)"), explain(held)
    assert "release_too_new" in held.last_line
    assert held.report["clock"] is None
    assert fast.last_line.startswith("OK: 2/2 nodes updated"), explain(fast)
    assert 3500 <= fast.report["clock"]["fast_forward_seconds"] <= 3600


@pytest.mark.e2e
def test_a_failure_on_a_clock_years_ahead_reaches_the_shadow_without_a_refusal(
    tmp_path: Path,
) -> None:
    """The apiserver judges a report's failure time against its own now: on the machine's clock
    every failure stamped on a run's clock years ahead was refused as later than now, and the
    node ended only by its state's timeout."""
    run = run_simulate(
        tmp_path,
        "--nodes", "2", "--max-concurrent", "1", "--start-at", "2031-06-01T00:00Z",
        "--fault", "node-01=prepare",
    )  # fmt: skip

    assert run.returncode == 1, explain(run)
    refusals = [e for e in run.agent_events("node-01") if e.get("event") == "cluster.refused"]
    assert refusals == [], refusals[:2]
    assert "emulated failure of the host's prepare command" in run.stdout, explain(run)
    assert "timed out in" not in run.stdout, explain(run)
