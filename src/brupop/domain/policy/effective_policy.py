"""The rollout policy in force: the `default` policy object when there is a readable one, else
the last good one, else the environment's behaviour as it was before policy objects existed.

With no object every safety feature is off (nothing paused, no gate, no halt, no canary, no
alert gate), so the controller behaves exactly as its environment settings alone make it.
The scheduling rules (`scheduling`) come from the policy when there is one; without one only
the start order differs from the original (see `scheduling_policy.DEFAULT_SCHEDULING`). The
state timeouts keep coming from the environment.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from brupop.domain.policy.policy_object import UpdatePolicy
from brupop.domain.policy.prestage import Prestage
from brupop.domain.policy.scheduling_policy import DEFAULT_SCHEDULING, SchedulingPolicy
from brupop.domain.policy.update_policy import (
    AlertGateSpec,
    CanarySpec,
    HealthGateSpec,
    RebootHooksSpec,
    UpdatePolicySpec,
)


class PolicySource(StrEnum):
    """Where the policy in force comes from."""

    ENVIRONMENT = "environment"
    POLICY = "policy"
    LAST_GOOD = "last good policy"


@dataclass(frozen=True)
class EffectivePolicy:
    """The safety knobs the controller applies on its next pass."""

    source: PolicySource = PolicySource.ENVIRONMENT
    paused: bool = False
    health_gate: HealthGateSpec | None = None
    halt_after_failures: int | None = None
    canary: CanarySpec | None = None
    alert_gate: AlertGateSpec | None = None
    hooks: RebootHooksSpec | None = None
    scheduling: SchedulingPolicy = DEFAULT_SCHEDULING
    prestage: Prestage | None = None
    generation: int | None = None
    problem: str | None = None

    @property
    def halts(self) -> bool:
        """Failures can halt the fleet (only under a policy object)."""
        return self.halt_after_failures is not None


ENVIRONMENT_POLICY = EffectivePolicy()
"""No policy object: the behaviour of brupop before policies, from the environment alone."""


def policy_from_spec(spec: UpdatePolicySpec, generation: int | None = None) -> EffectivePolicy:
    """The policy a readable spec asks for."""
    return EffectivePolicy(
        source=PolicySource.POLICY,
        paused=spec.paused,
        health_gate=spec.health_gate,
        halt_after_failures=spec.halt_after_failures,
        canary=spec.canary,
        alert_gate=spec.alert_gate,
        hooks=spec.hooks,
        scheduling=spec.scheduling,
        prestage=spec.prestage,
        generation=generation,
    )


def resolve_policy(
    current: UpdatePolicy | None, previous: EffectivePolicy = ENVIRONMENT_POLICY
) -> EffectivePolicy:
    """The policy in force once `current` (the `default` object, None when absent) is read.

    A readable spec takes effect as it is. An unreadable one keeps `previous` (the last good
    policy, or the environment's behaviour) and carries the reason in `problem`. Deleting the
    object returns to the environment's behaviour.
    """
    if current is None:
        return ENVIRONMENT_POLICY
    if current.spec is not None:
        return policy_from_spec(current.spec, current.generation)
    kept = previous.source if previous.source is PolicySource.ENVIRONMENT else None
    return replace(
        previous,
        source=kept or PolicySource.LAST_GOOD,
        problem=current.problem or "the policy's spec cannot be read",
    )
