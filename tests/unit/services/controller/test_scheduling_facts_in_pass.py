"""What a controller pass publishes about fleet-wide scheduling: the global limit it applies
(the policy's `maxConcurrent`, a count or a percentage, else MAX_CONCURRENT_UPDATE), the update
time finishBy expects (from the durations the policy status keeps; 900 s before any), and the
facts `/status` sends for `brupop status` (budgets in use, the expected time and its source,
the clock's hold on every start)."""

from __future__ import annotations

from datetime import timedelta

from brupop.domain.policy.update_policy_status import UpdatePolicyStatus
from brupop.domain.reason import Explanation, Reason
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.starting.budget_rule import BudgetUse
from tests.unit.services.controller.fleet import START, Fleet, RecordingMetrics
from tests.unit.services.controller.passes import policy_object

ZONE = "topology.kubernetes.io/zone"


def test_a_percentage_max_concurrent_is_the_limit_the_controller_shows() -> None:
    fleet = Fleet(4)
    fleet.cluster.policies.apply(policy_object(maxConcurrent="50%"))
    metrics = RecordingMetrics()
    controller = fleet.controller(1, metrics=metrics)

    controller.tick()

    assert controller.limit() == ConcurrencyLimit(2)
    assert metrics.concurrency_limits[-1] == 2
    assert fleet.outside_idle() == 2


def test_a_count_max_concurrent_is_the_limit_the_controller_shows() -> None:
    fleet = Fleet(4)
    fleet.cluster.policies.apply(policy_object(maxConcurrent=3))
    metrics = RecordingMetrics()
    controller = fleet.controller(1, metrics=metrics)

    controller.tick()

    assert controller.limit() == ConcurrencyLimit(3)
    assert metrics.concurrency_limits[-1] == 3


def test_without_a_policy_limit_the_environment_limit_is_shown() -> None:
    fleet = Fleet(4)
    metrics = RecordingMetrics()
    controller = fleet.controller(None, metrics=metrics)
    assert controller.limit() == ConcurrencyLimit(None)  # before the first pass too

    controller.tick()

    assert controller.limit() == ConcurrencyLimit(None)
    assert metrics.concurrency_limits[-1] is None


def test_the_expected_update_time_is_the_p90_of_the_durations_in_the_policy_status() -> None:
    fleet = Fleet(1)
    fleet.cluster.policies.apply(policy_object())
    durations = tuple(60 * minutes for minutes in range(1, 21))  # 1 to 20 minutes
    fleet.cluster.policies.update_status(UpdatePolicyStatus(update_durations=durations))
    metrics = RecordingMetrics()
    controller = fleet.controller(1, metrics=metrics)

    controller.tick()

    assert metrics.expected_update == 18 * 60  # the 18th of 20, nearest rank
    facts = controller.scheduling()
    assert (facts.expected_seconds, facts.updates_counted, facts.finish_by) == (1080, 20, True)


def test_before_any_history_the_expected_update_time_is_fifteen_minutes() -> None:
    fleet = Fleet(1)
    fleet.cluster.policies.apply(policy_object(finishBy=False))
    metrics = RecordingMetrics()
    controller = fleet.controller(1, metrics=metrics)

    controller.tick()

    assert metrics.expected_update == 900
    facts = controller.scheduling()
    assert (facts.expected_seconds, facts.updates_counted, facts.finish_by) == (900, 0, False)


def test_the_scheduling_facts_carry_every_budget_group_in_use() -> None:
    fleet = Fleet(3)
    for node, zone in {"node-00": "a", "node-01": "a", "node-02": "b"}.items():
        fleet.cluster.nodes.set_labels(node, {ZONE: zone})
    fleet.cluster.policies.apply(policy_object(budgets=[{"groupBy": ZONE, "maxConcurrent": 1}]))
    controller = fleet.controller(5)

    controller.tick()

    assert controller.scheduling().budgets == (
        BudgetUse(ZONE, "a", 1, 1),
        BudgetUse(ZONE, "b", 1, 1),
    )


def test_a_blackout_in_force_is_the_hold_on_every_start() -> None:
    fleet = Fleet(1)
    blackout = {
        "start": START.isoformat(),
        "end": (START + timedelta(days=2)).isoformat(),
        "reason": "holiday freeze",
    }
    fleet.cluster.policies.apply(policy_object(blackouts=[blackout]))
    controller = fleet.controller(1)

    controller.tick()

    assert controller.scheduling().hold == Explanation(
        Reason.BLACKOUT,
        "blackout until 2026-01-07T10:00:00Z: holiday freeze",
    )


def test_a_closed_environment_window_is_the_hold_on_every_start() -> None:
    fleet = Fleet(1)
    controller = fleet.controller(1, window="* * 2-3 * * * *")  # closed at 10:00 UTC

    controller.tick()

    hold = controller.scheduling().hold
    assert hold is not None and hold.reason is Reason.OUTSIDE_WINDOW
    assert hold.detail == "outside window (next window opens at 2026-01-06T02:00:00+00:00)"
    assert not controller.scheduling().finish_by  # no policy object: no finishBy


def test_an_open_window_and_no_blackout_hold_nothing() -> None:
    fleet = Fleet(1)
    fleet.cluster.policies.apply(policy_object())
    controller = fleet.controller(1)

    controller.tick()

    assert controller.scheduling().hold is None
