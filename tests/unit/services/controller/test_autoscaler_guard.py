"""AutoscalerGuard: the autoscaler annotations on the nodes holding a slot, undone after."""

from __future__ import annotations

from collections.abc import Mapping

import structlog
from structlog.testing import capture_logs

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import Node, Taint
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE
from brupop.domain.starting.autoscaler_annotations import AUTOSCALER_RECORD_ANNOTATION as RECORD
from brupop.domain.starting.autoscaler_annotations import DO_NOT_DISRUPT_ANNOTATION as KARPENTER
from brupop.domain.starting.autoscaler_annotations import (
    SCALE_DOWN_DISABLED_ANNOTATION as SCALE_DOWN,
)
from brupop.domain.states import StateTimeouts
from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.errors import UnavailableError
from brupop.services.controller.mirrors.fleet_mirror import FleetMirror
from brupop.services.controller.starts.autoscaler_guard import AutoscalerGuard
from tests.fakes.clock import FakeClock

GUARDED = {SCALE_DOWN: "true", KARPENTER: "true"}
RESCAN = 300.0


class _CountingNodes:
    """The in-memory Nodes, counting reads and writes, with a switch that fails writes."""

    def __init__(self, cluster: InMemoryCluster) -> None:
        self._nodes: NodeRepository = cluster.nodes
        self.gets = 0
        self.writes: list[str] = []
        self.failing = False

    def get(self, name: str) -> Node:
        self.gets += 1
        return self._nodes.get(name)

    def set_annotations(
        self,
        name: str,
        annotations: Mapping[str, str | None],
        *,
        resource_version: str | None = None,
    ) -> Node:
        if self.failing:
            raise UnavailableError("apiserver unavailable")
        self.writes.append(name)
        return self._nodes.set_annotations(name, annotations, resource_version=resource_version)

    def __getattr__(self, attribute: str) -> object:
        return getattr(self._nodes, attribute)


class _Rig:
    def __init__(self, count: int = 4) -> None:
        self.clock = FakeClock()
        self.cluster = InMemoryCluster(clock=self.clock)
        for i in range(count):
            self.cluster.add_node(f"node-{i:02d}", labels={OPT_IN_LABEL: OPT_IN_VALUE})
        self.nodes = _CountingNodes(self.cluster)
        self.fleet = FleetMirror(
            self.cluster.shadows,
            self.nodes,  # type: ignore[arg-type]
            RolloutRules(ConcurrencyLimit(1), StateTimeouts()),
        )
        self.guard = self.new_guard()

    def new_guard(self) -> AutoscalerGuard:
        """A guard as a freshly started (or newly leading) controller has it."""
        self.sync()
        log = structlog.get_logger("test")
        return AutoscalerGuard(
            self.nodes,  # type: ignore[arg-type]
            self.fleet.nodes,
            self.clock,
            log,
            rescan_seconds=RESCAN,
        )

    def sync(self) -> None:
        self.fleet.node_informer.relist()

    def annotations(self, name: str) -> dict[str, str]:
        return dict(self.cluster.nodes.get(name).annotations)


def test_a_node_holding_a_slot_gets_both_annotations_and_the_others_are_untouched() -> None:
    rig = _Rig()
    assert rig.guard.keep({"node-01"}, leading=True) == 1
    annotations = rig.annotations("node-01")
    assert {k: annotations[k] for k in GUARDED} == GUARDED
    assert RECORD in annotations
    assert rig.annotations("node-00") == {} and rig.annotations("node-02") == {}


def test_a_node_back_in_idle_gets_back_exactly_what_it_had() -> None:
    rig = _Rig()
    rig.cluster.nodes.set_annotations("node-01", {"team": "a", KARPENTER: "false"})
    rig.sync()
    rig.guard.keep({"node-01"}, leading=True)
    assert rig.annotations("node-01")[KARPENTER] == "true"
    assert rig.guard.keep(set(), leading=True) == 1
    assert rig.annotations("node-01") == {"team": "a", KARPENTER: "false"}


def test_an_annotation_present_before_brupop_is_left_as_it_was() -> None:
    rig = _Rig()
    rig.cluster.nodes.set_annotations("node-01", {KARPENTER: "true"})
    rig.sync()
    rig.guard.keep({"node-01"}, leading=True)
    rig.guard.keep(set(), leading=True)
    assert rig.annotations("node-01") == {KARPENTER: "true"}


def test_a_pass_with_nothing_to_change_writes_nothing_and_reads_only_the_mirror() -> None:
    rig = _Rig(50)
    rig.guard.keep({"node-01", "node-02"}, leading=True)
    rig.nodes.writes.clear()
    gets = rig.nodes.gets
    for _ in range(3):
        assert rig.guard.keep({"node-01", "node-02"}, leading=True) == 0
    assert rig.nodes.writes == [] and rig.nodes.gets == gets


def test_a_node_that_went_idle_while_the_controller_was_down_is_restored_on_the_next_pass() -> None:
    rig = _Rig()
    rig.cluster.nodes.set_annotations("node-02", {"team": "a"})
    rig.sync()
    rig.guard.keep({"node-02"}, leading=True)
    restarted = rig.new_guard()  # a new process: nothing known but what the Nodes carry
    assert restarted.keep(set(), leading=True) == 1
    assert rig.annotations("node-02") == {"team": "a"}


def test_a_replica_that_does_not_lead_writes_nothing() -> None:
    rig = _Rig()
    assert rig.guard.keep({"node-01"}, leading=False) == 0
    assert rig.nodes.writes == []


def test_a_record_another_leader_left_is_found_when_this_replica_leads_again() -> None:
    rig = _Rig()
    rig.guard.keep(set(), leading=True)  # knows of no record yet
    other = rig.new_guard()
    other.keep({"node-03"}, leading=True)  # another replica led meanwhile
    rig.guard.keep(set(), leading=False)
    rig.sync()
    assert rig.guard.keep(set(), leading=True) == 1
    assert rig.annotations("node-03") == {}


def test_a_failed_write_is_logged_without_a_traceback_and_retried_on_a_later_pass() -> None:
    rig = _Rig()
    rig.guard.keep({"node-01"}, leading=True)
    rig.nodes.failing = True
    with capture_logs() as logs:
        assert rig.guard.keep(set(), leading=True) == 0
    warnings = [e for e in logs if e["log_level"] == "warning"]
    assert [e["event"] for e in warnings] == ["autoscaler_annotations.write_failed"]
    assert "exc_info" not in warnings[0] and warnings[0]["node"] == "node-01"
    rig.nodes.failing = False
    assert rig.guard.keep(set(), leading=True) == 1
    assert rig.annotations("node-01") == {}


def test_a_node_that_opted_out_while_guarded_is_still_restored() -> None:
    rig = _Rig()
    rig.guard.keep({"node-01"}, leading=True)
    rig.cluster.nodes.set_labels("node-01", {OPT_IN_LABEL: None})
    rig.sync()
    assert rig.fleet.nodes.get("node-01") is None
    assert rig.guard.keep(set(), leading=True) == 1
    assert rig.annotations("node-01") == {}


def test_a_node_the_mirror_holds_up_to_date_is_annotated_without_reading_it_again() -> None:
    rig = _Rig()
    gets = rig.nodes.gets
    assert rig.guard.keep({"node-01"}, leading=True) == 1
    assert rig.guard.keep(set(), leading=True) == 1
    assert rig.nodes.writes == ["node-01", "node-01"] and rig.nodes.gets == gets


def test_a_lagging_mirror_never_overwrites_the_record_of_what_was_there() -> None:
    rig = _Rig()
    stale = rig.fleet.nodes.get("node-01")  # from before the administrator's annotation
    assert stale is not None
    rig.cluster.nodes.set_annotations("node-01", {KARPENTER: "false"})
    rig.new_guard().keep({"node-01"}, leading=True)  # another replica, before a leader change
    rig.fleet.nodes.remove("node-01")
    rig.fleet.nodes.put(stale)  # this replica's mirror has not seen that write yet
    rig.guard.keep({"node-01"}, leading=True)
    rig.sync()
    rig.guard.keep(set(), leading=True)
    assert rig.annotations("node-01") == {KARPENTER: "false"}


def test_the_node_mirror_keeps_what_the_guard_and_start_rules_read_and_no_other_annotation() -> (
    None
):
    rig = _Rig(1)
    rig.cluster.nodes.set_annotations("node-00", {KARPENTER: "true", "big": "x" * 1000})
    rig.cluster.set_node_taints("node-00", [Taint("ToBeDeletedByClusterAutoscaler")])
    rig.cluster.set_node_deleting("node-00")
    rig.sync()
    held = rig.fleet.nodes.get("node-00")
    assert held is not None
    assert dict(held.annotations) == {KARPENTER: "true"}
    assert held.taints == (Taint("ToBeDeletedByClusterAutoscaler"),)
    assert held.deleting and held.created_at == rig.clock.now()
