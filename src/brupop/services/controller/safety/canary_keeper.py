"""CanaryKeeper: the canaries of the current rollout, and when each finished.

The canaries are chosen when a rollout (target version) and canary spec begin, among the
nodes whose agent has reported and that still run an older version: by label selector (the
Nodes are read for their labels then) or as the first `count` in the controller's order.
Agents report late (seconds after they start over a real API server), so until the policy is
met the set grows: a node whose first report comes later and fits joins it, and the soak
waits for it (`awaited_canaries`). Only the shadows that changed, and those not reported
yet, are looked at after the first pass of a rollout. The canaries chosen by count are kept in
the policy's status with their version, and a controller that starts (or follows the leader)
takes them from there. A canary finishes when the controller
sees it Idle on the target version, unless it failed (its gate, or ErrorReset); the soak is
computed from those moments (`domain/safety/canary.py`). When the record is begun again for the
same target (a pass without one, as after a relist), the canaries chosen again keep the moments
they finished, and those already Idle on it are seen finished at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime

from brupop.domain.policy.update_policy import CanarySpec
from brupop.domain.policy.update_policy_status import UpdatePolicyStatus
from brupop.domain.rollout.ordering import update_order
from brupop.domain.rollout.rollout_book import RolloutBook
from brupop.domain.safety.canary import (
    SoakProgress,
    awaited_canaries,
    choose_canaries,
    soak_progress,
)
from brupop.domain.shadow import Shadow
from brupop.domain.states import UpdateState
from brupop.domain.versions import versions_differ
from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.errors import PortError


class CanaryKeeper:
    """The canaries chosen for a rollout and the moments they finished."""

    def __init__(self, nodes: NodeRepository) -> None:
        self._nodes = nodes
        self._canary_key: tuple[str, CanarySpec] | None = None
        self._canaries: dict[str, str] = {}  # shadow name -> node name
        self._finished: dict[str, datetime] = {}  # canary node -> when it finished
        self._labels: dict[str, Mapping[str, str]] = {}  # node name -> labels (selector only)
        self._unreported: dict[str, str] = {}  # shadow name -> node name, no status yet
        self._kept: tuple[str, tuple[str, ...]] | None = None  # the status's version, nodes
        self._begun_for: str | None = None  # the target of the last begin (its finishes kept)

    def follow_status(self, status: UpdatePolicyStatus | None) -> None:
        """Note the canaries the policy's status keeps (chosen by count, for a version): a
        rollout to that version begins with them."""
        progress = status.canary if status is not None else None
        if progress is None or progress.version is None or not progress.chosen:
            self._kept = None
        else:
            self._kept = (progress.version, progress.chosen)

    def facts(
        self,
        canary: CanarySpec | None,
        book: RolloutBook,
        touched: Iterable[str],
        target: str | None,
        failed: frozenset[str],
        now: datetime,
    ) -> tuple[frozenset[str] | None, SoakProgress | None]:
        """The canaries' shadow names (None: no canary rule) and their soak; a canary counts
        as finished when seen Idle on `target` and not among the `failed` nodes."""
        if canary is None or target is None:
            self._canary_key = None
            return None, None
        touched = set(touched)
        if self._canary_key != (target, canary):
            if not self._begin(canary, book, target):
                # The Nodes' labels cannot be read: no canary known, so nobody else starts.
                return frozenset(), SoakProgress(0, 0, None, done=False)
            self._canary_key = (target, canary)
            touched |= self._canaries.keys()  # a canary chosen again may have finished already
        else:
            self._join_late(canary, book, touched, target)
        # The canaries not finished yet are looked at in every pass, touched or not: a finish
        # missed once (the node counted failed in the pass that saw it Idle) is never stuck.
        waiting = {s for s, n in self._canaries.items() if n not in self._finished}
        self._note_finished(book, touched | waiting, target, failed, now)
        chosen = [s for n in self._canaries if (s := book.shadow(n)) is not None]
        awaited = awaited_canaries(
            canary, len(self._canaries), self._unreported.values(), self._labels
        )
        soak = soak_progress(
            chosen,
            target_version=target,
            finished_at=self._finished,
            soak_seconds=canary.soak_seconds,
            now=now,
            awaited=awaited,
            asked=canary.count,
        )
        if canary.count is not None:
            soak = replace(soak, version=target, kept=tuple(sorted(self._canaries.values())))
        return frozenset(self._canaries), soak

    def _note_finished(
        self,
        book: RolloutBook,
        touched: set[str],
        target: str,
        failed: frozenset[str],
        now: datetime,
    ) -> None:
        """Record `now` for the canaries among `touched` seen Idle on `target` (not failed)."""
        for name in touched:
            node = self._canaries.get(name)
            shadow = book.shadow(name)
            if node is None or shadow is None or node in self._finished or node in failed:
                continue
            status = shadow.status
            if (
                status is not None
                and status.current_state is UpdateState.IDLE
                and shadow.spec.state is UpdateState.IDLE
                and not versions_differ(status.current_version, target)
            ):
                self._finished[node] = now

    def _begin(self, canary: CanarySpec, book: RolloutBook, target: str) -> bool:
        """Pick the first canaries of the rollout to `target` among the nodes it still has to
        update, and note the nodes not reported yet (this reads the whole fleet, once per
        rollout); False when the Nodes cannot be read."""
        labels: dict[str, Mapping[str, str]] = {}
        if canary.label_selector is not None:
            try:
                labels = {node.name: node.labels for node in self._nodes.list().items}
            except PortError:
                return False
        shadows = [s for n in book.names() if (s := book.shadow(n)) is not None]
        self._labels = labels
        self._canaries = {}
        finished = self._finished if self._begun_for == target else {}
        self._begun_for = target
        self._finished = {}
        self._unreported = {s.name: s.node_name for s in shadows if s.status is None}
        kept = self._kept
        if canary.count is not None and kept is not None and kept[0] == target:
            by_node = {s.node_name: s for s in shadows}
            again = [by_node[n] for n in kept[1] if n in by_node][: canary.count]
            self._canaries = {s.name: s.node_name for s in again}
            for shadow in again:
                self._unreported.pop(shadow.name, None)
        self._add(canary, book, shadows, target)
        chosen = set(self._canaries.values())
        self._finished = {node: at for node, at in finished.items() if node in chosen}
        return True

    def _join_late(
        self, canary: CanarySpec, book: RolloutBook, touched: set[str], target: str
    ) -> None:
        """Let the nodes that reported since the last pass join, while the policy is not met."""
        if canary.count is not None and len(self._canaries) >= canary.count:
            return  # met: nothing more to choose, and nothing awaited
        looked_at = touched | self._unreported.keys()
        seen: list[Shadow] = []
        for name in looked_at:
            shadow = book.shadow(name)
            if shadow is None:
                self._unreported.pop(name, None)
            elif shadow.status is None:
                self._unreported[name] = shadow.node_name
            else:
                self._unreported.pop(name, None)
                seen.append(shadow)
        if seen:
            self._add(canary, book, seen, target)

    def _add(
        self, canary: CanarySpec, book: RolloutBook, shadows: list[Shadow], target: str
    ) -> None:
        """Add the canaries `shadows` hold (in the controller's order) to those chosen."""
        pending = [
            s
            for s in shadows
            if s.name not in self._canaries
            and s.status is not None
            and versions_differ(s.status.current_version, target)
        ]
        ordered = update_order(pending, book.controller_node)
        nodes = choose_canaries(ordered, canary, self._labels, chosen=len(self._canaries))
        self._canaries.update({s.name: s.node_name for s in ordered if s.node_name in nodes})
