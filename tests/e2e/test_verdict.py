"""The simulation's verdict: strict about every node, every agent exit, tracebacks and the limit.

Fast checks of the rules behind `brupop simulate`'s exit code (no fleet is run here).
"""

from __future__ import annotations

import signal
from dataclasses import replace
from typing import Any

import pytest

from brupop.domain.policy.update_policy_status import HaltReason
from brupop.simulation.fleet.supervisor import AgentProcessExit, ExitCause
from brupop.simulation.outcome.report import VERDICT_CHARS, NodeOutcome, RunFacts, judge
from tests.support.simulation_outcome import node_outcome, run_facts


def _node(**changes: object) -> NodeOutcome:
    """node-01 updated, its agent started twice (before and after its reboot)."""
    fields: dict[str, Any] = {"agent_exit_codes": [0, 0], **changes}
    return node_outcome(**fields)


def _facts(*nodes: NodeOutcome, **changes: object) -> RunFacts:
    return run_facts(*(nodes or [_node()]), **changes)


def test_a_clean_rollout_is_ok_and_says_so_on_its_last_line() -> None:
    report = judge(_facts(_node(), _node(name="node-02")))

    assert report.ok
    assert report.verdict.startswith("OK: 2/2 nodes updated 1.19.0 -> 1.20.0")


@pytest.mark.parametrize(
    ("changes", "node_changes", "expected"),
    [
        ({"max_concurrent_observed": 3}, {}, "concurrency limit exceeded: 3 nodes"),
        ({"tracebacks": 2}, {}, "2 traceback(s) in agent logs"),
        ({"timed_out": True}, {}, "timed out"),
        ({}, {"unschedulable": True}, "node-01 left cordoned"),
        ({}, {"final_state": "MonitoringUpdate"}, "node-01 ended in MonitoringUpdate"),
        ({}, {"unexpected_exits": [1]}, "node-01 agent exited with 1"),
        (
            {},
            {"final_version": "1.19.0", "reason": "backing_off: until later"},
            "node-01 still on 1.19.0 (backing_off)",
        ),
    ],
)
def test_any_flaw_fails_the_run_and_the_last_line_names_it(
    changes: dict[str, object], node_changes: dict[str, object], expected: str
) -> None:
    report = judge(_facts(_node(**node_changes), **changes))

    assert not report.ok
    assert report.verdict.startswith("FAILED")
    assert expected in report.verdict


def test_unlimited_concurrency_has_no_limit_to_exceed() -> None:
    report = judge(_facts(max_concurrent_allowed=None, max_concurrent_observed=40))

    assert report.ok
    assert "(limit unlimited)" in report.verdict


@pytest.mark.parametrize(
    ("code", "cause", "acceptable"),
    [
        (0, ExitCause.ON_ITS_OWN, True),
        (0, ExitCause.SHUTDOWN, True),
        (0, ExitCause.CHAOS_SIGTERM, True),
        (-signal.SIGKILL, ExitCause.CHAOS_SIGKILL, True),
        (-signal.SIGTERM, ExitCause.CHAOS_SIGTERM, False),  # the agent must handle SIGTERM
        (-signal.SIGKILL, ExitCause.SHUTDOWN_KILLED, False),  # it ignored SIGTERM
        (-signal.SIGKILL, ExitCause.ON_ITS_OWN, False),
        (1, ExitCause.ON_ITS_OWN, False),
    ],
)
def test_only_clean_exits_and_the_chaos_sigkill_are_acceptable(
    code: int, cause: ExitCause, acceptable: bool
) -> None:
    exit_ = AgentProcessExit(pid=10, code=code, peak_rss_kib=1, ran_seconds=1.0, cause=cause)

    assert exit_.acceptable is acceptable


@pytest.mark.parametrize("cause", [ExitCause.SHUTDOWN, ExitCause.CHAOS_SIGTERM])
def test_a_sigterm_death_is_acceptable_only_when_the_harness_sent_it_before_any_handler(
    cause: ExitCause,
) -> None:
    early = AgentProcessExit(
        pid=10, code=-signal.SIGTERM, peak_rss_kib=1, ran_seconds=0.1, cause=cause,
        sigterm_before_handler=True,
    )  # fmt: skip

    assert early.acceptable
    assert not replace(early, sigterm_before_handler=False).acceptable
    assert not replace(early, code=1).acceptable


def test_a_failed_verdict_of_a_large_fleet_stays_one_short_line_with_the_first_few() -> None:
    nodes = [_node(name=f"node-{i:03}", unschedulable=True) for i in range(1, 101)]

    report = judge(_facts(*nodes))

    assert report.verdict.startswith("FAILED (0/100 nodes updated): node-001 left cordoned; ")
    assert report.verdict.endswith(f"; and {100 - report.failures_in_verdict} more (listed above)")
    assert len(report.verdict) <= VERDICT_CHARS
    assert len(report.failures) == 100  # the report keeps every one


def test_a_failed_verdict_shortens_a_long_failure() -> None:
    report = judge(_facts(_node(unexpected_exits=[1] * 2000)))

    assert report.verdict.startswith("FAILED (1/1 nodes updated): node-01 agent exited with 1, 1")
    assert report.verdict.endswith("...")
    assert len(report.verdict) <= VERDICT_CHARS


def test_a_node_left_behind_is_named_with_its_reason_code_and_the_sentence_stays_out() -> None:
    sentence = "outside_window: outside every maintenance window; the next opens at " + "x" * 300
    nodes = [_node(name=f"node-0{i}", final_version="1.19.0", reason=sentence) for i in range(6)]

    report = judge(_facts(*nodes))

    assert report.verdict.startswith(
        "FAILED (0/6 nodes updated): node-00 still on 1.19.0 (outside_window); "
        "node-01 still on 1.19.0 (outside_window); "
    )
    assert len(report.verdict) <= VERDICT_CHARS
    assert "maintenance window" not in report.verdict
    assert report.nodes[0].reason == sentence, "the sentence is kept in the report"


def test_a_halted_verdict_with_a_long_detail_stays_within_the_limit() -> None:
    halt = HaltReason(node="node-01", check="http:ready", detail="y" * 1000)

    report = judge(_facts(halt=halt))

    assert report.verdict.startswith(
        "HALTED (1/1 nodes updated): node node-01 failed http:ready: y"
    )
    assert report.verdict.endswith("...; no node starts until `brupop resume`")
    assert len(report.verdict) <= VERDICT_CHARS
