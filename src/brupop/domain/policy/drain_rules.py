"""DrainRules: what one drain follows, the update policy's `drain` section over the environment.

The environment's DRAIN_TIMEOUT_SECONDS is the timeout unless the policy sets `timeoutSeconds`;
with no policy (or no `drain` section) a drain behaves as the original's: each pod's own grace
period, and at the timeout the node returns to service with its pods (`skip`).
"""

from __future__ import annotations

from dataclasses import dataclass

from brupop.domain.cluster.objects import Pod
from brupop.domain.policy.scheduling_policy import DrainPolicy, OnDrainTimeout


@dataclass(frozen=True)
class DrainRules:
    """The bounds and the timeout behaviour of one drain."""

    timeout_seconds: float
    grace_period_seconds: int | None = None
    on_timeout: OnDrainTimeout = OnDrainTimeout.SKIP
    force_namespaces: frozenset[str] = frozenset()
    from_policy: bool = False

    @property
    def forcing(self) -> bool:
        """At the timeout, blocking pods of the listed namespaces are deleted."""
        return self.on_timeout is OnDrainTimeout.FORCE

    def may_force(self, pod: Pod) -> bool:
        """`pod` may be deleted without eviction once the drain times out."""
        return self.forcing and pod.namespace in self.force_namespaces


def drain_rules(policy: DrainPolicy | None, environment_timeout_seconds: float) -> DrainRules:
    """The rules of a drain that starts under `policy` (None: the environment's alone)."""
    if policy is None:
        return DrainRules(timeout_seconds=environment_timeout_seconds)
    timeout = policy.timeout_seconds
    return DrainRules(
        timeout_seconds=float(timeout) if timeout is not None else environment_timeout_seconds,
        grace_period_seconds=policy.grace_period_seconds,
        on_timeout=policy.on_timeout,
        force_namespaces=frozenset(policy.force_namespaces),
        from_policy=True,
    )
