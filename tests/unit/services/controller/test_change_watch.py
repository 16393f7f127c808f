"""Which Node changes wake the controller: opt-in label, cordon, appearance and deletion only."""

from __future__ import annotations

import dataclasses

from brupop.domain.cluster import Node, WatchEvent, WatchEventType
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE
from brupop.services.controller.change_watch import NodeChanges

OPTED_IN = Node(name="n1", uid="u1", labels={OPT_IN_LABEL: OPT_IN_VALUE})


def _event(node: Node, kind: WatchEventType = WatchEventType.MODIFIED) -> WatchEvent[Node]:
    return WatchEvent(kind, node, "1")


def test_a_node_seen_for_the_first_time_is_a_change() -> None:
    assert NodeChanges()(_event(OPTED_IN, WatchEventType.ADDED))


def test_status_and_annotation_updates_are_not_changes() -> None:
    changes = NodeChanges()
    changes(_event(OPTED_IN))
    heartbeat = dataclasses.replace(OPTED_IN, annotations={"node.alpha/ttl": "0"})
    assert not changes(_event(heartbeat))
    assert not changes(_event(OPTED_IN))


def test_losing_the_opt_in_label_or_a_cordon_is_a_change() -> None:
    changes = NodeChanges()
    changes(_event(OPTED_IN))
    assert changes(_event(dataclasses.replace(OPTED_IN, labels={})))
    assert changes(_event(dataclasses.replace(OPTED_IN, labels={}, unschedulable=True)))


def test_a_deleted_node_is_a_change() -> None:
    changes = NodeChanges()
    changes(_event(OPTED_IN))
    assert changes(_event(OPTED_IN, WatchEventType.DELETED))
