"""The summary `brupop simulate` ends with: every failure on a line of its own, the verdict last."""

from __future__ import annotations

import io

from rich.console import Console

from brupop.domain.policy.update_policy_status import HaltReason
from brupop.simulation.outcome.display import print_summary
from brupop.simulation.outcome.report import NodeOutcome, judge
from tests.support.simulation_outcome import node_outcome, run_facts


def _printed(*nodes: NodeOutcome) -> list[str]:
    report = judge(run_facts(*nodes))
    out = io.StringIO()
    print_summary(Console(file=out, width=160, no_color=True), report)
    return out.getvalue().splitlines()


def test_failures_beyond_the_verdicts_first_few_each_get_a_line_above_it() -> None:
    lines = _printed(*[node_outcome(f"node-0{i}", unschedulable=True) for i in range(1, 7)])

    assert lines[-1].startswith("FAILED (0/6 nodes updated): node-01 left cordoned;")
    also = [line for line in lines if line.startswith("also failed:")]
    named = [f"node-0{i} left cordoned" in lines[-1] for i in range(1, 7)]
    assert named == [True] * sum(named) + [False] * (6 - sum(named)), "the first ones"
    assert also == [f"also failed: node-0{i} left cordoned" for i in range(sum(named) + 1, 7)]


def test_agents_killed_by_a_sigterm_sent_before_their_handler_are_counted_apart() -> None:
    early = {"code": -15, "cause": "shutdown", "sigterm_before_handler": True}
    lines = _printed(node_outcome("node-01", agent_exit_codes=[-15], agent_exits=[early]))

    assert lines[-1].startswith("OK: 1/1 nodes updated")
    assert any("killed by a SIGTERM sent before their handler: 1" in line for line in lines)


def test_a_halted_run_ends_with_a_line_saying_halted_with_the_node_and_the_check() -> None:
    halt = HaltReason(node="node-02", check="nodeReady", detail="the node is not Ready")
    report = judge(
        run_facts(
            node_outcome("node-01"),
            node_outcome("node-02"),
            node_outcome("node-03", final_version="1.19.0"),
            max_concurrent_allowed=1,
            max_concurrent_observed=1,
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
    behind = [
        node_outcome(f"node-0{i}", final_version="1.19.0", reason=halted) for i in (3, 4, 5, 6)
    ]

    lines = _printed(node_outcome("node-01"), *behind)

    text = "\n".join(lines)
    for i in (3, 4, 5, 6):
        assert text.count(f"node-0{i}: {halted}") == 1
    assert text.count("fleet halted after") == 4, "once per node, nowhere else"
    assert not [line for line in lines if line.startswith("also failed: node-0")]
    assert "halted: HALTED" not in text


def test_off_a_terminal_no_line_ends_in_spaces() -> None:
    lines = _printed(node_outcome("node-01"), node_outcome("node-02", final_version="1.19.0"))

    assert any(line.lstrip().startswith("node-01") for line in lines), lines
    assert [line for line in lines if line != line.rstrip()] == []
