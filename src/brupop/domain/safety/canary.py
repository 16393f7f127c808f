"""Canaries and their soak: which nodes update first, and when the others may follow.

Canaries are chosen by a label selector on the Node, or as the first N nodes in the
controller's order (`update_order`). They may start at once; every other node waits until
every canary has been Idle on the rollout's target version, with its health gate passed, for
`soakSeconds`. A canary that failed its gate never soaks, so the others keep waiting (and the
halt rule decides what happens to the fleet). Pure: `now` and the moments canaries finished
come in.

Agents report late (seconds after they start over a real API server), so the set grows until
the policy is met: a node that reports later and fits joins it, and the soak cannot end while
a canary is still awaited (`awaited_canaries`). When fewer nodes fit than `count`, the
canaries are all that do and the message says so.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from brupop.domain.policy.update_policy import CanarySpec
from brupop.domain.shadow import Shadow
from brupop.domain.states import UpdateState
from brupop.domain.timestamps import later
from brupop.domain.versions import versions_differ


def choose_canaries(
    ordered: Sequence[Shadow],
    canary: CanarySpec,
    node_labels: Mapping[str, Mapping[str, str]],
    *,
    chosen: int = 0,
) -> frozenset[str]:
    """The node names of the canaries among `ordered` (shadows in `update_order`), when
    `chosen` canaries are already chosen.

    By selector: every node whose labels match (a node whose labels are unknown is not a
    canary). By count: the first `count - chosen` nodes of `ordered`.
    """
    selector = canary.label_selector
    if selector is not None:
        return frozenset(
            shadow.node_name
            for shadow in ordered
            if shadow.node_name in node_labels and selector.matches(node_labels[shadow.node_name])
        )
    return frozenset(shadow.node_name for shadow in ordered[: max(0, (canary.count or 0) - chosen)])


def awaited_canaries(
    canary: CanarySpec,
    chosen: int,
    unreported: Collection[str],
    node_labels: Mapping[str, Mapping[str, str]],
) -> int:
    """How many more canaries may still come from the `unreported` nodes (whose agent has not
    reported yet, so whether they still have to update is unknown): by count, up to the
    places left; by selector, those whose labels match."""
    selector = canary.label_selector
    if selector is not None:
        return sum(1 for n in unreported if n in node_labels and selector.matches(node_labels[n]))
    return min(max(0, (canary.count or 0) - chosen), len(unreported))


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
    """Where the canaries stand: how many chosen, how many done, when the soak ends; how many
    more are awaited (nodes that have not reported yet) and how many the policy asked for
    (None: chosen by selector); and, by count, which nodes (so a restart keeps them)."""

    canaries: int
    updated: int
    ends_at: datetime | None
    done: bool
    awaited: int = 0
    asked: int | None = None
    version: str | None = None  # the version the canaries update to
    kept: tuple[str, ...] = ()  # by count: the canary nodes, kept in the policy's status

    @property
    def all_updated(self) -> bool:
        """Every canary there will be is chosen and Idle on the new version."""
        return self.awaited == 0 and self.updated == self.canaries

    def message(self, now: datetime) -> str:
        """One sentence for the policy status and the REASON of the nodes that wait."""
        if self.done:
            return f"canaries soaked ({self.updated}/{self.canaries}){self._fewer()}"
        if self.awaited:
            return (
                f"waiting for canaries: {self.updated}/{self.canaries} updated, "
                f"{self.awaited} more to choose when {_nodes_report(self.awaited)}"
            )
        if self.updated < self.canaries:
            return f"waiting for canaries: {self.updated}/{self.canaries} updated{self._fewer()}"
        left = max(0, round((self.ends_at - now).total_seconds())) if self.ends_at else 0
        return f"canaries soaking: {left} s left{self._fewer()}"

    def _fewer(self) -> str:
        """Why fewer canaries than asked, when so."""
        if self.asked is None or self.canaries >= self.asked:
            return ""
        matches = "1 node matches" if self.canaries == 1 else f"{self.canaries} nodes match"
        return f" ({self.asked} canaries asked, {matches})"


def _nodes_report(count: int) -> str:
    return "its node reports" if count == 1 else "their nodes report"


def soak_progress(
    canaries: Collection[Shadow],
    *,
    target_version: str,
    finished_at: Mapping[str, datetime],
    soak_seconds: float,
    now: datetime,
    awaited: int = 0,
    asked: int | None = None,
) -> SoakProgress:
    """The soak of `canaries` on `target_version`.

    `finished_at` holds, per node name, when the controller saw the canary Idle on
    `target_version` with its gate passed (the controller records it; a canary missing from it
    has not finished). The soak ends `soak_seconds` after the last canary finished, and not
    while `awaited` canaries are still to be chosen. No canaries at all, none awaited, means
    nothing to wait for.
    """
    finished = [
        finished_at[shadow.node_name]
        for shadow in canaries
        if shadow.node_name in finished_at and is_idle_on(shadow, target_version)
    ]
    total = len(canaries)
    if len(finished) < total or awaited:
        return SoakProgress(total, len(finished), None, False, awaited, asked)
    if not finished:
        return SoakProgress(0, 0, None, True, 0, asked)
    ends_at = later(max(finished), timedelta(seconds=soak_seconds))
    return SoakProgress(total, total, ends_at, now >= ends_at, 0, asked)


def may_start(node_name: str, canaries: Collection[str], soak: SoakProgress) -> bool:
    """A canary may start any time; any other node only once the canaries have soaked."""
    return node_name in canaries or soak.done
