"""The summary `brupop simulate` ends with: every failure on a line of its own, the verdict last."""

from __future__ import annotations

import io
from dataclasses import replace

from rich.console import Console

from brupop.domain.policy.update_policy_status import HaltReason
from brupop.simulation.outcome.display import print_summary
from brupop.simulation.outcome.report import NodeOutcome, RunFacts, judge


def _node(name: str, **changes: object) -> NodeOutcome:
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


def _printed(*nodes: NodeOutcome) -> list[str]:
    report = judge(
        RunFacts(
            duration_seconds=9.5,
            max_concurrent_allowed=2,
            max_concurrent_observed=2,
            tracebacks=0,
            nodes=list(nodes),
            from_version="1.19.0",
            to_version="1.20.0",
        )
    )
    out = io.StringIO()
    print_summary(Console(file=out, width=160, no_color=True), report)
    return out.getvalue().splitlines()


def test_failures_beyond_the_verdicts_first_few_each_get_a_line_above_it() -> None:
    lines = _printed(*[_node(f"node-0{i}", unschedulable=True) for i in range(1, 7)])

    assert lines[-1].startswith("FAILED (0/6 nodes updated): node-01 left cordoned;")
    also = [line for line in lines if line.startswith("also failed:")]
    named = [f"node-0{i} left cordoned" in lines[-1] for i in range(1, 7)]
    assert named == [True] * sum(named) + [False] * (6 - sum(named)), "the first ones"
    assert also == [f"also failed: node-0{i} left cordoned" for i in range(sum(named) + 1, 7)]


def test_agents_killed_by_a_sigterm_sent_before_their_handler_are_counted_apart() -> None:
    early = {"code": -15, "cause": "shutdown", "sigterm_before_handler": True}
    lines = _printed(_node("node-01", agent_exit_codes=[-15], agent_exits=[early]))

    assert lines[-1].startswith("OK: 1/1 nodes updated")
    assert any("killed by a SIGTERM sent before their handler: 1" in line for line in lines)


def test_a_halted_run_ends_with_a_line_saying_halted_with_the_node_and_the_check() -> None:
    halt = HaltReason(node="node-02", check="nodeReady", detail="the node is not Ready")
    report = judge(
        RunFacts(
            duration_seconds=9.5,
            max_concurrent_allowed=1,
            max_concurrent_observed=1,
            tracebacks=0,
            nodes=[_node("node-01"), _node("node-02"), _node("node-03", final_version="1.19.0")],
            from_version="1.19.0",
            to_version="1.20.0",
            halt=halt,
        )
    )
    out = io.StringIO()
    print_summary(Console(file=out, width=160, no_color=True), report)

    assert not report.ok
    assert (report.halted, report.halt_reason) == (
        True,
        {"node": "node-02", "check": "nodeReady", "detail": "the node is not Ready"},
    )
    assert out.getvalue().splitlines()[-1] == (
        "HALTED (2/3 nodes updated): node node-02 failed nodeReady: the node is not Ready; "
        "no node starts until `brupop resume`"
    )


def test_each_node_left_behind_has_its_reason_printed_once() -> None:
    halted = "halted: fleet halted after 1 failed node(s); node node-02 failed nodeReady"
    behind = [_node(f"node-0{i}", final_version="1.19.0", reason=halted) for i in (3, 4, 5, 6)]

    lines = _printed(_node("node-01"), *behind)

    text = "\n".join(lines)
    for i in (3, 4, 5, 6):
        assert text.count(f"node-0{i}: {halted}") == 1
    assert text.count("fleet halted after") == 4, "once per node, nowhere else"
    assert not [line for line in lines if line.startswith("also failed: node-0")]
    assert "halted: HALTED" not in text


def test_off_a_terminal_no_line_ends_in_spaces() -> None:
    lines = _printed(_node("node-01"), _node("node-02", final_version="1.19.0"))

    assert any(line.lstrip().startswith("node-01") for line in lines), lines
    assert [line for line in lines if line != line.rstrip()] == []
