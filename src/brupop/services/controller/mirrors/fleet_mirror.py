"""FleetMirror: what the controller knows of the fleet between passes, kept current by changes.

It owns the two informers (shadows, and Nodes that opted in: a label selector on the list and
the watch), the RolloutBook of decisions, and the set of orphans (shadows whose Node is not
among the opted-in ones: candidates for the opt-out cleanup). `catch_up` brings the mirrors up
to date: a list at start, after a 410, when leadership is gained (a new leader must see the old
one's last writes before it starts anyone) and every `resync_seconds`; otherwise the watch's
events (applied here when no follower thread does it). `absorb` then decides again exactly
the shadows that changed or whose deadline passed, and holds back (or lets go) the shadows
of Nodes whose pause label changed.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from brupop.domain.cluster.objects import Node
from brupop.domain.policy.update_policy import NODE_PAUSED_LABEL
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.rollout.rollout_book import RolloutBook, set_member
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE, Shadow
from brupop.domain.starting.autoscaler_annotations import (
    AUTOSCALER_RECORD_ANNOTATION,
    GUARD_ANNOTATIONS,
)
from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.cluster.shadow_repository import ShadowRepository
from brupop.ports.errors import NotFoundError, PortError
from brupop.services.controller.mirrors.node_changes import node_change_matters, node_is_paused
from brupop.services.runtime.informer import Informer, VersionCheck
from brupop.services.runtime.mirror import NAME_OF, RESOURCE_VERSION_OF, Mirror

OPT_IN_SELECTOR = {OPT_IN_LABEL: OPT_IN_VALUE}
_AUTOSCALER_KEYS = (*GUARD_ANNOTATIONS, AUTOSCALER_RECORD_ANNOTATION)


class FleetMirror:
    """Mirrors of shadows and opted-in Nodes, and the decisions made from them."""

    def __init__(
        self, shadows: ShadowRepository, nodes: NodeRepository, rules: RolloutRules
    ) -> None:
        self._repository = shadows
        self.shadows: Mirror[Shadow] = Mirror(NAME_OF, RESOURCE_VERSION_OF)
        self.group_labels: frozenset[str] = frozenset()
        """Label keys the budgets group nodes by: kept in the mirror, and their changes matter."""
        self.nodes: Mirror[Node] = Mirror(
            NAME_OF, RESOURCE_VERSION_OF, matters=self._node_matters, keep=self._slim
        )
        self.shadow_informer = Informer(
            "shadows",
            lambda: shadows.list(),
            lambda version, seconds: shadows.watch(version, seconds),
            self.shadows,
            VersionCheck(lambda: shadows.list_versions(), lambda name: shadows.get(name)),
        )
        self.node_informer = Informer(
            "nodes",
            lambda: nodes.list(OPT_IN_SELECTOR),
            lambda version, seconds: nodes.watch(version, seconds, OPT_IN_SELECTOR),
            self.nodes,
            VersionCheck(lambda: nodes.list_versions(OPT_IN_SELECTOR), _opted_in(nodes)),
        )
        self.book = RolloutBook(rules)
        self.orphans: set[str] = set()
        self._by_node: dict[str, set[str]] = {}
        self.node_changes = 0
        """Node changes that mattered so far (what budget group sizes are cached against)."""

    def catch_up(
        self, *, followed: bool, resync: bool, gained_leadership: bool, by_list: bool = False
    ) -> None:
        """Bring both mirrors up to date. A resync repairs what a missed event left wrong;
        the shadows it changes are decided again like any other change, the others keep their
        decision (a decision depends only on its shadow, the time and fixed settings).

        `followed`: watch threads apply the events; otherwise the watch is polled here, or
        (`by_list`) the mirrors are listed again."""
        for informer in (self.node_informer, self.shadow_informer):
            relist = resync or by_list or not informer.mirror.filled
            relist = relist or (gained_leadership and informer is self.shadow_informer)
            if relist:
                informer.relist()
            elif not followed:
                informer.poll()

    def absorb(self, now: datetime) -> set[str]:
        """Decide the shadows that changed or whose deadline passed; their names."""
        book = self.book
        paused_changed: set[str] = set()
        changed_nodes = self.nodes.take_changes()
        self.node_changes += len(changed_nodes)
        for node_name in changed_nodes:
            node = self.nodes.get(node_name)
            paused = node_is_paused(node)
            for name in self._by_node.get(node_name, ()):
                set_member(self.orphans, name, node is None)
                if book.hold_back(name, paused):
                    paused_changed.add(name)
        touched = self.shadows.take_changes()
        for name in touched:
            self._unindex(name)
            shadow = self.shadows.get(name)
            if shadow is None:
                book.drop(name)
            else:
                book.record(shadow, now)
                self._index(shadow)
        touched.update(book.redecide(book.due(now), now))
        return touched | paused_changed

    def follow_labels(self, keys: frozenset[str]) -> bool:
        """Keep the Node labels `keys` (the budgets' groupBy keys) from now on; when a key is
        new, list the Nodes again so the mirror holds it at once. True when it listed."""
        if keys == self.group_labels:
            return False
        before, self.group_labels = self.group_labels, keys
        if keys <= before or not self.nodes.filled:
            return False
        try:
            self.node_informer.relist(refresh=True)
        except PortError:
            self.group_labels = before  # listed again on the next pass
            raise
        return True

    def written(self, stored: list[Shadow], conflicted: list[str]) -> None:
        """Our own writes, into the mirror at once; shadows that conflicted are read again."""
        for shadow in stored:
            self.shadows.put(shadow)
        for name in conflicted:
            try:
                self.shadows.put(self._repository.get(name))
            except NotFoundError:
                self.shadows.remove(name)
            except PortError:
                continue  # the watch brings it; the write journal holds the pass until then

    def removed(self, names: set[str]) -> None:
        """Shadows the cleanup deleted."""
        for name in names:
            self.shadows.remove(name)

    def orphan_shadows(self) -> list[Shadow]:
        """The shadows whose Node is not an opted-in one, by name."""
        return [s for n in sorted(self.orphans) if (s := self.book.shadow(n)) is not None]

    def _index(self, shadow: Shadow) -> None:
        self._by_node.setdefault(shadow.node_name, set()).add(shadow.name)
        node = self.nodes.get(shadow.node_name)
        set_member(self.orphans, shadow.name, node is None)
        self.book.hold_back(shadow.name, node_is_paused(node))

    def _unindex(self, name: str) -> None:
        old = self.book.shadow(name)
        self.orphans.discard(name)
        if old is None:
            return
        names = self._by_node.get(old.node_name)
        if names is not None:
            names.discard(name)
            if not names:
                del self._by_node[old.node_name]

    def _node_matters(self, old: Node | None, new: Node | None) -> bool:
        if node_change_matters(old, new):
            return True
        assert old is not None and new is not None  # a Node appearing or going matters above
        return any(old.labels.get(k) != new.labels.get(k) for k in self.group_labels)

    def _slim(self, node: Node) -> Node:
        return _slim(node, self.group_labels)


def _opted_in(nodes: NodeRepository) -> Callable[[str], Node | None]:
    """A read of one Node that sees it only while it is opted in (as the selector lists)."""

    def read(name: str) -> Node | None:
        node = nodes.get(name)
        return node if node.labels.get(OPT_IN_LABEL) == OPT_IN_VALUE else None

    return read


def _slim(node: Node, group_labels: frozenset[str] = frozenset()) -> Node:
    """What a pass reads of a Node (its presence, opt-in, pause and budget group labels, its
    cordon, the autoscaler annotations, its taints, creation and deletion): a 10k-node
    cluster's labels and annotations would otherwise be most of the controller's memory. The
    opt-out cleanup reads the whole Node afresh before it changes anything."""
    labels, annotations = node.labels, node.annotations
    kept = {k: labels[k] for k in (OPT_IN_LABEL, NODE_PAUSED_LABEL, *group_labels) if k in labels}
    noted = {k: annotations[k] for k in _AUTOSCALER_KEYS if k in annotations}
    return Node(
        name=node.name,
        uid=node.uid,
        labels=kept,
        annotations=noted,
        unschedulable=node.unschedulable,
        resource_version=node.resource_version,
        taints=node.taints,
        created_at=node.created_at,
        deleting=node.deleting,
    )
