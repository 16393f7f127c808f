"""NodeActions: brupop undoes only the cordon and the load-balancer exclusion it made itself."""

from __future__ import annotations

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import (
    CORDONED_BY_BRUPOP_ANNOTATION,
    LB_EXCLUDED_BY_BRUPOP_ANNOTATION,
    LB_EXCLUSION_LABEL,
)
from brupop.services.apiserver.drain.node_actions import NodeActions


def test_cordon_then_uncordon_leaves_the_node_schedulable_and_unmarked() -> None:
    cluster = InMemoryCluster()
    cluster.add_node("n1")
    actions = NodeActions(cluster.nodes)

    actions.cordon("n1")
    assert cluster.nodes.get("n1").unschedulable
    assert CORDONED_BY_BRUPOP_ANNOTATION in cluster.nodes.get("n1").annotations

    actions.uncordon("n1")
    node = cluster.nodes.get("n1")
    assert not node.unschedulable
    assert CORDONED_BY_BRUPOP_ANNOTATION not in node.annotations


def test_node_cordoned_by_an_administrator_stays_cordoned_after_the_update() -> None:
    cluster = InMemoryCluster()
    cluster.add_node("n1", unschedulable=True)
    actions = NodeActions(cluster.nodes)

    actions.cordon("n1")
    actions.cordon("n1")
    actions.uncordon("n1")

    node = cluster.nodes.get("n1")
    assert node.unschedulable
    assert CORDONED_BY_BRUPOP_ANNOTATION not in node.annotations


def test_repeated_cordon_by_brupop_is_still_undone_by_uncordon() -> None:
    cluster = InMemoryCluster()
    cluster.add_node("n1")
    actions = NodeActions(cluster.nodes)

    actions.cordon("n1")
    actions.cordon("n1")
    actions.uncordon("n1")
    actions.uncordon("n1")

    assert not cluster.nodes.get("n1").unschedulable


def test_uncordon_without_a_brupop_cordon_changes_nothing() -> None:
    cluster = InMemoryCluster()
    cluster.add_node("n1")
    actions = NodeActions(cluster.nodes)
    before = cluster.nodes.get("n1")

    actions.uncordon("n1")

    assert cluster.nodes.get("n1") == before


def test_load_balancer_exclusion_added_by_brupop_is_removed_again() -> None:
    cluster = InMemoryCluster()
    cluster.add_node("n1")
    actions = NodeActions(cluster.nodes)

    actions.exclude_from_load_balancers("n1")
    assert cluster.nodes.get("n1").labels[LB_EXCLUSION_LABEL] == "True"

    actions.restore_to_load_balancers("n1")
    node = cluster.nodes.get("n1")
    assert LB_EXCLUSION_LABEL not in node.labels
    assert LB_EXCLUDED_BY_BRUPOP_ANNOTATION not in node.annotations


def test_load_balancer_label_set_by_an_administrator_survives_the_update() -> None:
    cluster = InMemoryCluster()
    cluster.add_node("n1", labels={LB_EXCLUSION_LABEL: "true"})
    actions = NodeActions(cluster.nodes)

    actions.exclude_from_load_balancers("n1")
    actions.restore_to_load_balancers("n1")

    node = cluster.nodes.get("n1")
    assert node.labels[LB_EXCLUSION_LABEL] == "true"
    assert LB_EXCLUDED_BY_BRUPOP_ANNOTATION not in node.annotations
