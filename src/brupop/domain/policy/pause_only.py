"""The `default` policy `brupop pause` creates when there is none: `paused`, plus the values
that keep what the controller does without a policy object (no halt short of the most failures
allowed, no finishBy, no capacity check), marked so that `brupop resume` deletes it again."""

from __future__ import annotations

from brupop.domain.policy.policy_object import UpdatePolicy
from brupop.domain.policy.update_policy import (
    DEFAULT_POLICY_NAME,
    HALT_AFTER_FAILURES_MAX,
    UpdatePolicySpec,
)

PAUSE_ONLY_FIELDS = (
    f"haltAfterFailures {HALT_AFTER_FAILURES_MAX}, finishBy false and capacityCheck false"
)
"""How the fields a bare object would turn on are set, for the line `brupop pause` prints."""


def pause_only_spec(paused: bool = True) -> UpdatePolicySpec:
    """`paused` and nothing else in force: what the environment alone makes the controller do."""
    return UpdatePolicySpec(
        paused=paused,
        halt_after_failures=HALT_AFTER_FAILURES_MAX,
        finish_by=False,
        capacity_check=False,
    )


def pause_only(paused: bool = True) -> UpdatePolicy:
    """The object `brupop pause` creates (its namespace filled in by whoever writes it)."""
    return UpdatePolicy(
        name=DEFAULT_POLICY_NAME, namespace="", spec=pause_only_spec(paused), pause_created=True
    )


def is_pause_only(policy: UpdatePolicy) -> bool:
    """`brupop pause` created it and nobody changed anything in it but `paused` since."""
    if not policy.pause_created or policy.spec is None:
        return False
    return policy.spec.model_copy(update={"paused": True}) == pause_only_spec()
