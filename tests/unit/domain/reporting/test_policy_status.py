"""The one status the controller writes on the policy: phase and sentence (fleet_phase),
generation, counts, the halt with its node and check, and the canaries' progress."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from brupop.domain.policy.effective_policy import ENVIRONMENT_POLICY, EffectivePolicy, PolicySource
from brupop.domain.policy.update_policy import UpdatePolicySpec
from brupop.domain.policy.update_policy_status import NodeCounts, PolicyPhase
from brupop.domain.reporting.policy_status import FleetProgress, policy_status
from brupop.domain.safety.canary import SoakProgress
from brupop.domain.safety.halt import HaltDecision, NodeFailure
from brupop.domain.starting.budget_rule import BudgetRule

NOW = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
PAUSED = EffectivePolicy(source=PolicySource.POLICY, paused=True, generation=4)
POLICY = EffectivePolicy(source=PolicySource.POLICY, generation=1)
ROLLING = FleetProgress({"Idle": 3, "RebootedIntoUpdate": 1}, updating=1, waiting=2)


def test_a_paused_fleet_counts_the_nodes_finishing() -> None:
    status = policy_status(PAUSED, ROLLING, generation=4, now=NOW)
    assert status.phase is PolicyPhase.PAUSED
    assert status.message == (
        "Paused: no node starts until `brupop resume`; 1 node finishing the update in progress."
    )
    assert status.observed_generation == 4
    assert status.nodes == NodeCounts(idle=3, rebooted_into_update=1)


def test_a_rolling_fleet_and_an_idle_one() -> None:
    rolling = policy_status(ENVIRONMENT_POLICY, ROLLING, generation=1, now=NOW)
    idle = policy_status(
        ENVIRONMENT_POLICY, FleetProgress({"Idle": 4}, 0, 0), generation=1, now=NOW
    )
    assert (rolling.phase, rolling.message) == (
        PolicyPhase.ROLLING,
        "Rolling: 1 node updating, 2 waiting.",
    )
    assert (idle.phase, idle.message) == (
        PolicyPhase.IDLE,
        "Idle: every node runs the version it is offered.",
    )


def test_an_unusable_first_spec_says_the_default_behaviour_stays() -> None:
    policy = EffectivePolicy(problem="spec.canary.selector: unbalanced parentheses")
    status = policy_status(policy, ROLLING, generation=1, now=NOW)
    assert status.message == (
        "The spec was not applied, the default behaviour stays in force: "
        "spec.canary.selector: unbalanced parentheses"
    )


def test_a_halted_status_names_node_check_and_keeps_when_it_began() -> None:
    cause = NodeFailure("node-b", "nodeReady", "the node is not Ready", NOW - timedelta(30))
    halt = HaltDecision(halted=True, cause=cause, failures=1)
    began = NOW - timedelta(seconds=60)
    progress = FleetProgress({"Idle": 4}, 0, 3, halt=halt, halted_at=began)

    status = policy_status(POLICY, progress, generation=4, now=NOW)

    assert status.phase is PolicyPhase.HALTED
    assert status.halted_at == began
    assert status.halt_reason is not None and status.halt_reason.node == "node-b"
    assert status.halt_reason.check == "nodeReady"
    assert (status.failures, status.observed_generation) == (1, 4)
    assert status.message.startswith("Halted: halted after 1 failed node(s); node node-b failed")


def test_a_halt_outranks_a_pause_in_the_phase() -> None:
    cause = NodeFailure("node-b", "nodeReady", "", NOW)
    halt = HaltDecision(halted=True, cause=cause, failures=1)
    status = policy_status(PAUSED, FleetProgress({}, 0, 0, halt=halt), generation=4, now=NOW)
    assert status.phase is PolicyPhase.HALTED
    assert status.halted_at == NOW


def test_a_soaking_status_carries_canary_progress_and_no_halt() -> None:
    soak = SoakProgress(canaries=2, updated=2, ends_at=NOW + timedelta(seconds=60), done=False)
    progress = FleetProgress({"Idle": 5}, 0, 3, soak=soak)

    status = policy_status(POLICY, progress, generation=1, now=NOW)

    assert status.phase is PolicyPhase.SOAKING
    assert status.canary is not None
    assert (status.canary.nodes, status.canary.updated) == (2, 2)
    assert status.canary.soak_ends_at == NOW + timedelta(seconds=60)
    assert status.halted_at is None and status.halt_reason is None


def test_a_budget_on_the_longest_label_key_a_policy_accepts_fits_in_the_status() -> None:
    prefix = ".".join(["a" * 63, "b" * 63, "c" * 63, "d" * 61])  # a 253-character DNS subdomain
    key = f"{prefix}/{'z' * 63}"
    budget = UpdatePolicySpec.model_validate(
        {"budgets": [{"groupBy": key, "maxConcurrent": 1}]}
    ).budgets[0]
    unlabelled = BudgetRule(budget, {}, [None]).usage()  # the group "(no <key>)", in use

    status = policy_status(
        POLICY, replace(ROLLING, budgets=tuple(unlabelled)), generation=1, now=NOW
    )

    assert [(use.budget, use.group) for use in status.budgets_in_use] == [(key, f"(no {key})")]
