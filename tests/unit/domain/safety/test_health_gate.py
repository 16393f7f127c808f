"""The health gate's decision for every combination of check results and time."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest

from brupop.domain.policy.update_policy import HealthGateSpec, HttpProbeSpec
from brupop.domain.safety.health_gate import (
    CheckOutcome,
    CheckResult,
    GateCheck,
    GateVerdict,
    decide_gate,
    enabled_checks,
    gate_started_at,
    in_gate,
)
from brupop.domain.states import UpdateState
from tests.fakes.clock import FakeClock
from tests.unit.domain.controller_shadows import ago, shadow

TIMEOUT = 600
CHECKS = (GateCheck.NODE_READY, GateCheck.DAEMON_SET_PODS_READY, GateCheck.HTTP_PROBE)
# Seconds after monitoring started: well before, just before, at, and after the deadline.
MOMENTS = (0, TIMEOUT - 1, TIMEOUT, TIMEOUT + 3600)


def _results(outcomes: tuple[CheckOutcome, ...]) -> list[CheckResult]:
    return [
        CheckResult(check, outcome, f"{check} is {outcome}")
        for check, outcome in zip(CHECKS, outcomes, strict=True)
    ]


@pytest.mark.parametrize("elapsed", MOMENTS)
@pytest.mark.parametrize("outcomes", list(itertools.product(CheckOutcome, repeat=len(CHECKS))))
def test_gate_verdict_for_every_combination_of_results_and_time(
    outcomes: tuple[CheckOutcome, ...], elapsed: int
) -> None:
    clock = FakeClock()
    started = clock.now()
    clock.advance(elapsed)
    results = _results(outcomes)

    decision = decide_gate(
        results, monitoring_since=started, timeout_seconds=TIMEOUT, now=clock.now()
    )

    failed = [r for r in results if r.outcome is CheckOutcome.FAILED]
    pending = [r for r in results if r.outcome is CheckOutcome.PENDING]
    assert decision.deadline == started + timedelta(seconds=TIMEOUT)
    if failed:  # an outright failure fails at once, whatever the time
        assert (decision.verdict, decision.check, decision.timed_out) == (
            GateVerdict.FAIL,
            failed[0],
            False,
        )
    elif not pending:  # every check passed: the node may go Idle
        assert (decision.verdict, decision.check) == (GateVerdict.PASS, None)
    elif elapsed < TIMEOUT:  # something pending, time left: keep waiting, name what for
        assert (decision.verdict, decision.check) == (GateVerdict.WAIT, pending[0])
    else:  # something pending at the deadline: fail, naming the check still pending
        assert (decision.verdict, decision.check, decision.timed_out) == (
            GateVerdict.FAIL,
            pending[0],
            True,
        )


def test_no_enabled_check_passes_at_once() -> None:
    clock = FakeClock()

    decision = decide_gate([], monitoring_since=clock.now(), timeout_seconds=1, now=clock.now())

    assert decision.verdict is GateVerdict.PASS
    assert decision.message == "health gate passed"


def test_messages_name_the_awaited_and_the_failed_check() -> None:
    clock = FakeClock()
    started = clock.now()
    probe = CheckResult(GateCheck.HTTP_PROBE, CheckOutcome.PENDING, "GET x answered 503", 1)

    waiting = decide_gate([probe], monitoring_since=started, timeout_seconds=60, now=started)
    clock.advance(60)
    failed = decide_gate([probe], monitoring_since=started, timeout_seconds=60, now=clock.now())

    assert waiting.message == "health gate waiting for httpProbe[1]: GET x answered 503"
    assert failed.message.startswith("health gate failed on httpProbe[1]: GET x answered 503")
    assert "still pending at the deadline" in failed.message


def test_enabled_checks_follow_the_gate_settings_in_order() -> None:
    probes = (
        HttpProbeSpec(url="http://{node_ip}:8080/healthz"),
        HttpProbeSpec(url="http://a.example/"),
    )
    everything = HealthGateSpec(http_probes=probes)
    nothing = HealthGateSpec(
        require_node_ready=False,
        require_daemon_set_pods_ready=False,
        require_evicted_workloads_recovered=False,
    )

    assert enabled_checks(everything) == (
        (GateCheck.NODE_READY, None),
        (GateCheck.DAEMON_SET_PODS_READY, None),
        (GateCheck.EVICTED_WORKLOADS_RECOVERED, None),
        (GateCheck.HTTP_PROBE, 0),
        (GateCheck.HTTP_PROBE, 1),
    )
    assert enabled_checks(nothing) == ()


def test_the_gate_clock_starts_when_monitoring_was_asked_for_and_reached() -> None:
    monitoring = UpdateState.MONITORING_UPDATE
    reached = shadow("a", spec=monitoring, state=monitoring, stamped=ago(42))
    on_its_way = shadow(
        "b", spec=monitoring, state=UpdateState.REBOOTED_INTO_UPDATE, stamped=ago(5)
    )
    idle = shadow("c")

    assert in_gate(reached) and gate_started_at(reached) == ago(42)
    assert not in_gate(on_its_way) and gate_started_at(on_its_way) is None
    assert gate_started_at(idle) is None
