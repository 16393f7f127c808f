"""Canaries and their soak: which nodes update first, and when the others may follow.

Canaries are chosen by a label selector on the Node, or as the first N nodes in the
controller's order (`update_order`). They may start at once; every other node waits until
every canary has been Idle on the rollout's target version, with its health gate passed, for
`soakSeconds`. A canary that failed its gate never soaks, so the others keep waiting (and the
halt rule decides what happens to the fleet). Pure: `now` and the moments canaries finished
come in.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from brupop.domain.policy.update_policy import Canary
from brupop.domain.shadow import Shadow
from brupop.domain.states import UpdateState
from brupop.domain.timestamps import later
from brupop.domain.versions import versions_differ


def choose_canaries(
    ordered: Sequence[Shadow], canary: Canary, node_labels: Mapping[str, Mapping[str, str]]
) -> frozenset[str]:
    """The node names of the canaries among `ordered` (shadows in `update_order`).

    By selector: every node whose labels match (a node whose labels are unknown is not a
    canary). By count: the first `count` nodes of `ordered`.
    """
    selector = canary.label_selector
    if selector is not None:
        return frozenset(
            shadow.node_name
            for shadow in ordered
            if shadow.node_name in node_labels and selector.matches(node_labels[shadow.node_name])
        )
    return frozenset(shadow.node_name for shadow in ordered[: canary.count or 0])


def is_idle_on(shadow: Shadow, version: str) -> bool:
    """The node runs `version` and both its spec and its status are Idle."""
    status = shadow.status
    return (
        status is not None
        and shadow.spec.state is UpdateState.IDLE
        and status.current_state is UpdateState.IDLE
        and not versions_differ(status.current_version, version)
    )


@dataclass(frozen=True)
class SoakProgress:
    """Where the canaries stand: how many, how many done, and when the soak ends."""

    canaries: int
    updated: int
    ends_at: datetime | None
    done: bool

    def message(self, now: datetime) -> str:
        """One sentence for the policy status and the REASON of the nodes that wait."""
        if self.done:
            return f"canaries soaked ({self.updated}/{self.canaries})"
        if self.updated < self.canaries:
            return f"waiting for canaries: {self.updated}/{self.canaries} updated"
        left = max(0, round((self.ends_at - now).total_seconds())) if self.ends_at else 0
        return f"canaries soaking: {left} s left"


def soak_progress(
    canaries: Collection[Shadow],
    *,
    target_version: str,
    finished_at: Mapping[str, datetime],
    soak_seconds: float,
    now: datetime,
) -> SoakProgress:
    """The soak of `canaries` on `target_version`.

    `finished_at` holds, per node name, when the controller saw the canary Idle on
    `target_version` with its gate passed (the controller records it; a canary missing from it
    has not finished). The soak ends `soak_seconds` after the last canary finished. No
    canaries at all means nothing to wait for.
    """
    finished = [
        finished_at[shadow.node_name]
        for shadow in canaries
        if shadow.node_name in finished_at and is_idle_on(shadow, target_version)
    ]
    total = len(canaries)
    if len(finished) < total:
        return SoakProgress(total, len(finished), None, done=False)
    if not finished:
        return SoakProgress(0, 0, None, done=True)
    ends_at = later(max(finished), timedelta(seconds=soak_seconds))
    return SoakProgress(total, total, ends_at, done=now >= ends_at)


def may_start(node_name: str, canaries: Collection[str], soak: SoakProgress) -> bool:
    """A canary may start any time; any other node only once the canaries have soaked."""
    return node_name in canaries or soak.done
