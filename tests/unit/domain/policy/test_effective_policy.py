"""The policy in force: no object is the environment's behaviour; a bad object keeps the last
good policy; deleting the object returns to the environment's behaviour."""

from __future__ import annotations

from brupop.domain.policy.effective_policy import (
    ENVIRONMENT_POLICY,
    EffectivePolicy,
    PolicySource,
    resolve_policy,
)
from brupop.domain.policy.policy_object import UpdatePolicy, policy_from_object
from brupop.domain.policy.update_policy import CanarySpec, HealthGateSpec, UpdatePolicySpec


def _policy(spec: dict[str, object], generation: int = 1) -> UpdatePolicy:
    return policy_from_object(
        {"metadata": {"name": "default", "generation": generation}, "spec": spec}
    )


def test_without_an_object_every_safety_feature_is_off() -> None:
    policy = resolve_policy(None)
    assert policy == ENVIRONMENT_POLICY
    assert policy == EffectivePolicy(
        source=PolicySource.ENVIRONMENT,
        paused=False,
        health_gate=None,
        halt_after_failures=None,
        canary=None,
        alert_gate=None,
    )
    assert not policy.halts


def test_a_readable_object_is_in_force_as_written() -> None:
    policy = resolve_policy(
        _policy({"paused": True, "healthGate": {}, "canary": {"count": 2}}, generation=4)
    )
    assert policy.source is PolicySource.POLICY
    assert policy.paused
    assert policy.health_gate == HealthGateSpec()
    assert policy.canary == CanarySpec(count=2)
    assert (policy.halt_after_failures, policy.halts) == (1, True)
    assert (policy.generation, policy.problem) == (4, None)


def test_an_empty_object_halts_after_one_failure_and_changes_nothing_else() -> None:
    policy = resolve_policy(_policy({}))
    assert (policy.paused, policy.health_gate, policy.canary, policy.alert_gate) == (
        False,
        None,
        None,
        None,
    )
    assert policy.halt_after_failures == 1


def test_a_bad_object_keeps_the_last_good_policy_and_says_why() -> None:
    good = resolve_policy(_policy({"paused": True}, generation=1))
    kept = resolve_policy(_policy({"canary": {"selector": "a in ("}}, generation=2), good)
    assert kept.source is PolicySource.LAST_GOOD
    assert (kept.paused, kept.generation) == (True, 1)
    assert kept.problem is not None and kept.problem.startswith("spec.canary.selector")
    again = resolve_policy(_policy({"paused": "x"}, generation=3), kept)
    assert again.source is PolicySource.LAST_GOOD
    assert again.problem is not None and again.problem.startswith("spec.paused")


def test_a_bad_first_object_keeps_the_environments_behaviour_and_says_why() -> None:
    kept = resolve_policy(_policy({"haltAfterFailures": 0}))
    assert kept.source is PolicySource.ENVIRONMENT
    assert not kept.halts
    assert kept.problem is not None and "haltAfterFailures" in kept.problem


def test_fixing_the_object_clears_the_problem_and_deleting_it_returns_to_the_environment() -> None:
    bad = resolve_policy(_policy({"paused": 3}), resolve_policy(_policy({})))
    fixed = resolve_policy(_policy({"paused": True}, generation=3), bad)
    assert (fixed.source, fixed.problem, fixed.paused) == (PolicySource.POLICY, None, True)
    assert resolve_policy(None, fixed) == ENVIRONMENT_POLICY


def test_an_unreadable_object_without_a_reason_still_gets_one() -> None:
    blank = UpdatePolicy(name="default", namespace="ops", spec=None)
    assert resolve_policy(blank).problem == "the policy's spec cannot be read"
    assert resolve_policy(UpdatePolicy("default", "ops", UpdatePolicySpec())).problem is None
