"""What `brupop simulate` judges, made for the tests of its verdict and summary: one node's
outcome and the run's facts, by default a clean update of every node from 1.19.0 to 1.20.0."""

from __future__ import annotations

from dataclasses import replace

from brupop.simulation.outcome.report import NodeOutcome, RunFacts


def node_outcome(name: str = "node-01", **changes: object) -> NodeOutcome:
    """Node `name` updated to 1.20.0 with one reboot and a clean agent exit, but for `changes`."""
    node = NodeOutcome(
        name=name,
        initial_version="1.19.0",
        final_version="1.20.0",
        final_state="Idle",
        unschedulable=False,
        reboots=1,
        agent_exit_codes=[0],
        agent_peak_rss_kib=41000,
    )
    return replace(node, **changes)  # type: ignore[arg-type]


def run_facts(*nodes: NodeOutcome, **changes: object) -> RunFacts:
    """A 9.5 s run of `nodes` (one updated node if none) at a limit of 2, reached, with no
    traceback, but for `changes`."""
    facts = RunFacts(
        duration_seconds=9.5,
        max_concurrent_allowed=2,
        max_concurrent_observed=2,
        tracebacks=0,
        nodes=list(nodes) or [node_outcome()],
        from_version="1.19.0",
        to_version="1.20.0",
    )
    return replace(facts, **changes)  # type: ignore[arg-type]
