"""Which Node changes wake the controller: opt-in label, cordon, appearance and deletion only."""

from __future__ import annotations

import dataclasses

from brupop.domain.cluster.objects import Node
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE
from brupop.services.controller.mirrors.node_changes import node_change_matters

OPTED_IN = Node(name="n1", uid="u1", labels={OPT_IN_LABEL: OPT_IN_VALUE})


def test_a_node_seen_for_the_first_time_is_a_change() -> None:
    assert node_change_matters(None, OPTED_IN)


def test_status_and_annotation_updates_are_not_changes() -> None:
    heartbeat = dataclasses.replace(OPTED_IN, annotations={"node.alpha/ttl": "0"})
    assert not node_change_matters(OPTED_IN, heartbeat)
    assert not node_change_matters(OPTED_IN, OPTED_IN)


def test_losing_the_opt_in_label_or_a_cordon_is_a_change() -> None:
    assert node_change_matters(OPTED_IN, dataclasses.replace(OPTED_IN, labels={}))
    assert node_change_matters(OPTED_IN, dataclasses.replace(OPTED_IN, unschedulable=True))


def test_a_deleted_node_is_a_change() -> None:
    assert node_change_matters(OPTED_IN, None)
