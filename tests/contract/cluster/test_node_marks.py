"""brupop's cordon and load-balancer marks over every NodeRepository: whichever write fails,
and wherever in a cycle, brupop never later undoes an administrator's cordon or exclusion."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping

import pytest

from brupop.domain.cluster.objects import (
    CORDONED_BY_BRUPOP_ANNOTATION,
    LB_EXCLUDED_BY_BRUPOP_ANNOTATION,
    LB_EXCLUSION_LABEL,
    LB_EXCLUSION_VALUE,
    Listing,
    Node,
    VersionListing,
    WatchBookmark,
    WatchEvent,
)
from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.errors import UnavailableError
from brupop.services.apiserver.drain.node_actions import NodeActions
from tests.contract.cluster.conftest import Backend, Ports

NODE = "node-a"
WRITES_PER_CYCLE = 4  # more than brupop needs: every place a write can fail is tried


class FailingWrite:
    """The cluster's Nodes, where the `failing`-th write (counted from 1) fails, once."""

    def __init__(self, nodes: NodeRepository, failing: int) -> None:
        self._nodes = nodes
        self._failing = failing
        self.writes = 0

    def get(self, name: str) -> Node:
        return self._nodes.get(name)

    def set_unschedulable(
        self,
        name: str,
        unschedulable: bool,
        *,
        annotations: Mapping[str, str | None] | None = None,
    ) -> Node:
        self._count()
        return self._nodes.set_unschedulable(name, unschedulable, annotations=annotations)

    def set_labels(
        self,
        name: str,
        labels: Mapping[str, str | None],
        *,
        annotations: Mapping[str, str | None] | None = None,
    ) -> Node:
        self._count()
        return self._nodes.set_labels(name, labels, annotations=annotations)

    def set_annotations(
        self,
        name: str,
        annotations: Mapping[str, str | None],
        *,
        resource_version: str | None = None,
    ) -> Node:
        self._count()
        return self._nodes.set_annotations(name, annotations, resource_version=resource_version)

    def list(self, label_selector: Mapping[str, str] | None = None) -> Listing[Node]:
        return self._nodes.list(label_selector)

    def list_versions(self, label_selector: Mapping[str, str] | None = None) -> VersionListing:
        return self._nodes.list_versions(label_selector)

    def watch(
        self,
        resource_version: str | None,
        timeout_seconds: float,
        label_selector: Mapping[str, str] | None = None,
    ) -> Iterator[WatchEvent[Node] | WatchBookmark]:
        return self._nodes.watch(resource_version, timeout_seconds, label_selector)

    def _count(self) -> None:
        self.writes += 1
        if self.writes == self._failing:
            raise UnavailableError("the PATCH did not reach the cluster")


def _attempt(action: Callable[[str], None]) -> None:
    """One agent request: a failed write is not retried (the agent may have moved on)."""
    with contextlib.suppress(UnavailableError):
        action(NODE)


def _cordon_marked(node: Node) -> bool:
    return node.annotations.get(CORDONED_BY_BRUPOP_ANNOTATION) == "true"


def _exclusion_marked(node: Node) -> bool:
    return node.annotations.get(LB_EXCLUDED_BY_BRUPOP_ANNOTATION) == "true"


def _excluded(node: Node) -> bool:
    return node.labels.get(LB_EXCLUSION_LABEL) == LB_EXCLUSION_VALUE


@pytest.mark.parametrize("failing", range(1, WRITES_PER_CYCLE + 1))
def test_a_cordon_mark_never_outlives_the_cordon_it_stands_for(
    backend: Backend, cluster: Ports, failing: int
) -> None:
    backend.add_node(NODE)
    flaky = NodeActions(FailingWrite(cluster.nodes, failing))
    for action in (flaky.cordon, flaky.uncordon):
        _attempt(action)
        node = cluster.nodes.get(NODE)
        assert node.unschedulable or not _cordon_marked(node), action.__name__


@pytest.mark.parametrize("failing", range(1, WRITES_PER_CYCLE + 1))
def test_a_cordon_cycle_with_a_failed_write_never_undoes_an_administrators_cordon(
    backend: Backend, cluster: Ports, failing: int
) -> None:
    """Where the failed cycle leaves the node schedulable, the administrator cordons it and
    brupop's next cycle keeps that cordon; where brupop's own cordon is still in force, its next
    cycle undoes it completely."""
    backend.add_node(NODE)
    flaky = NodeActions(FailingWrite(cluster.nodes, failing))
    _attempt(flaky.cordon)
    _attempt(flaky.uncordon)
    by_administrator = not cluster.nodes.get(NODE).unschedulable
    if by_administrator:
        cluster.nodes.set_unschedulable(NODE, True)

    actions = NodeActions(cluster.nodes)
    actions.cordon(NODE)
    actions.uncordon(NODE)

    node = cluster.nodes.get(NODE)
    assert node.unschedulable is by_administrator
    assert not _cordon_marked(node)


@pytest.mark.parametrize("failing", range(1, WRITES_PER_CYCLE + 1))
def test_an_exclusion_mark_never_outlives_the_exclusion_it_stands_for(
    backend: Backend, cluster: Ports, failing: int
) -> None:
    backend.add_node(NODE)
    flaky = NodeActions(FailingWrite(cluster.nodes, failing))
    for action in (flaky.exclude_from_load_balancers, flaky.restore_to_load_balancers):
        _attempt(action)
        node = cluster.nodes.get(NODE)
        assert _excluded(node) or not _exclusion_marked(node), action.__name__


@pytest.mark.parametrize("failing", range(1, WRITES_PER_CYCLE + 1))
def test_an_exclusion_cycle_with_a_failed_write_never_undoes_an_administrators_exclusion(
    backend: Backend, cluster: Ports, failing: int
) -> None:
    """As for the cordon: the administrator excludes a node brupop no longer excludes."""
    backend.add_node(NODE)
    flaky = NodeActions(FailingWrite(cluster.nodes, failing))
    _attempt(flaky.exclude_from_load_balancers)
    _attempt(flaky.restore_to_load_balancers)
    by_administrator = not _excluded(cluster.nodes.get(NODE))
    if by_administrator:
        cluster.nodes.set_labels(NODE, {LB_EXCLUSION_LABEL: LB_EXCLUSION_VALUE})

    actions = NodeActions(cluster.nodes)
    actions.exclude_from_load_balancers(NODE)
    actions.restore_to_load_balancers(NODE)

    node = cluster.nodes.get(NODE)
    assert _excluded(node) is by_administrator
    assert not _exclusion_marked(node)


_: type[NodeRepository] = FailingWrite
