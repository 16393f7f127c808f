"""On the same fleet, the order `brupop plan` predicts is the order `brupop simulate` then takes.

The fleet: six nodes in two zones, their workload pods spread unevenly so that cheapest-first
is not name order, at most two updating at once. simulate runs with the policy paused until
every agent has reported (`--resume-at`), so that every node is a candidate of the first pass
that may start one (otherwise the first agent to report would start first, whatever the
order); plan is given the same policy without the pause, the rollout as it runs once resumed,
and the paused policy too, which it must say starts nothing.

The comparison is of order only, with no tolerance: simulate's moments each node first left
Idle must sort the nodes as plan does. Two nodes started by the same pass may be seen leaving
Idle at the same moment; such a tie is broken as the controller breaks it (the order of plan,
which is the controller's start order), and nothing else is.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.simulate_run import Simulate, explain
from tests.support.policy_file import write_policy_file

PODS = "node-01=8,node-02=0,node-03=12,node-04=1,node-05=16,node-06=4"
FLEET = ("--nodes", "6", "--zones", "2", "--pods-per-node", PODS, "--max-concurrent", "2")
SPEC = "  maxConcurrent: 2\n"


def _plan(directory: Path, spec: str) -> dict[str, Any]:
    directory.mkdir()
    policy = write_policy_file(directory, spec)
    command = [sys.executable, "-m", "brupop", "plan", "--simulate", *FLEET, "--policy", policy]
    done = subprocess.run(
        [*command, "--json"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


@pytest.mark.e2e
def test_simulate_starts_the_nodes_in_the_order_plan_predicted(
    tmp_path: Path, simulate: Simulate
) -> None:
    planned = _plan(tmp_path / "plan", SPEC)
    paused = _plan(tmp_path / "paused", "  paused: true\n" + SPEC)
    order = [n["node"] for n in planned["nodes"] if n["order"] is not None]
    assert order == ["node-02", "node-04", "node-06", "node-01", "node-03", "node-05"]
    assert paused["notes"][0].startswith("no node starts: the fleet is paused")

    run = simulate(
        *FLEET, "--resume-at", "4", "--timeout", "150", policy="  paused: true\n" + SPEC,
    )  # fmt: skip

    assert run.returncode == 0, explain(run)
    started = {n["name"]: n["started_at"] for n in run.report["nodes"]}
    assert all(moment is not None for moment in started.values()), started
    taken = sorted(order, key=lambda name: (started[name], order.index(name)))
    assert taken == order, started
