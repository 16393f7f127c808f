"""What a plan is made from: one moment's view of the cluster, and what the plan assumes.

The snapshot is what the controller itself reads (shadows, opted-in Nodes, the cluster's pods
and PodDisruptionBudgets, the `default` policy with its status); the assumptions are what it
cannot read: how long each update takes, the environment's concurrency limit, the node the
controller runs on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from brupop.domain.cluster.objects import Node, Pod, PodDisruptionBudget
from brupop.domain.policy.effective_policy import ENVIRONMENT_POLICY, EffectivePolicy
from brupop.domain.policy.update_policy_status import UpdatePolicyStatus
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE, Shadow
from brupop.domain.starting.update_durations import UpdateDurations

PLAN_HORIZON = timedelta(days=366)
"""How far ahead a plan looks (as far as the start schedule searches for a window)."""


@dataclass(frozen=True)
class FleetSnapshot:
    """The cluster as the controller would read it at `taken_at`."""

    taken_at: datetime
    shadows: tuple[Shadow, ...]
    nodes: tuple[Node, ...]
    """Every Node (the capacity check counts them all); the opted-in ones are planned."""
    pods: tuple[Pod, ...] = ()
    budgets: tuple[PodDisruptionBudget, ...] = ()
    policy: EffectivePolicy = ENVIRONMENT_POLICY
    status: UpdatePolicyStatus | None = None
    """The `default` policy's status: learned durations, versions first seen, a halt."""

    def opted_in(self) -> tuple[Node, ...]:
        """The Nodes brupop updates (the opt-in label), by name."""
        return tuple(
            sorted(
                (n for n in self.nodes if n.labels.get(OPT_IN_LABEL) == OPT_IN_VALUE),
                key=lambda n: n.name,
            )
        )


@dataclass(frozen=True)
class PlanAssumptions:
    """What the plan takes as given: each update's duration (`expected_seconds`, the learned
    p90 unless the user gave one: `duration_given`), the environment's limit
    (MAX_CONCURRENT_UPDATE, used when the policy sets no `maxConcurrent`), the node the
    controller runs on (it updates last) and the release-age quorum."""

    expected_seconds: int
    duration_given: bool = False
    limit: ConcurrencyLimit = field(default_factory=lambda: ConcurrencyLimit(1))
    controller_node: str | None = None
    horizon: timedelta = PLAN_HORIZON
    release_age_quorum: int | None = None
    """The controller's RELEASE_AGE_QUORUM; None: its default (`release_quorum`)."""
    staged_seconds: int | None = None
    """The in-window part of an update whose host already holds its version, prepared ahead
    (drain, activate, reboot: no download); None: as long as any update."""

    @classmethod
    def learned(
        cls,
        status: UpdatePolicyStatus | None,
        *,
        duration_seconds: int | None = None,
        limit: ConcurrencyLimit | None = None,
        controller_node: str | None = None,
        release_age_quorum: int | None = None,
        staged_seconds: int | None = None,
    ) -> PlanAssumptions:
        """The durations the policy status learned (their p90, as finishBy uses), unless
        `duration_seconds` is given."""
        given = duration_seconds is not None
        if duration_seconds is None:
            history = UpdateDurations.of(status.update_durations if status is not None else ())
            duration_seconds = history.expected_seconds
        return cls(
            expected_seconds=max(1, duration_seconds),
            duration_given=given,
            limit=limit or ConcurrencyLimit(1),
            controller_node=controller_node,
            release_age_quorum=release_age_quorum,
            staged_seconds=None if staged_seconds is None else max(1, staged_seconds),
        )


def learned_from(status: UpdatePolicyStatus | None) -> int:
    """How many measured updates the expected duration comes from (0: the default guess)."""
    return len(status.update_durations) if status is not None else 0
