"""The `--unhealthy NODE` scenario: from its reboot on, NODE stays NotReady and its DaemonSet
(agent) pod never becomes Ready, as a node that booted into a bad image would look.

The moment is taken from the controller's own request: once NODE's spec asks for
RebootedIntoUpdate (after its drain, before its reboot), the kubelet's Ready conditions turn
False and stay so. A health gate that checks them then keeps the node in MonitoringUpdate until
its timeout fails it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from brupop.cli.fleet_description.nodes import SimulatedNode
from brupop.cli.fleet_description.simulated_cluster import SimulatedCluster
from brupop.domain.states import UpdateState
from brupop.simulation.fleet.observer import NodeView

_REBOOTING = (UpdateState.REBOOTED_INTO_UPDATE, UpdateState.MONITORING_UPDATE)


class UnhealthyNodes:
    """Turns the named nodes unhealthy when their reboot is asked for, once each."""

    def __init__(
        self, cluster: SimulatedCluster, fleet: Iterable[SimulatedNode], names: Iterable[str]
    ) -> None:
        chosen = set(names)
        self._cluster = cluster
        self._pending = {node.name: node.agent_pod for node in fleet if node.name in chosen}
        self.turned: list[str] = []

    @property
    def done(self) -> bool:
        """Every named node has been made unhealthy."""
        return not self._pending

    def step(self, views: Mapping[str, NodeView]) -> None:
        """Make unhealthy the named nodes whose reboot the controller has asked for."""
        for name in sorted(self._pending):
            view = views.get(name)
            if view is None or view.spec_state not in _REBOOTING:
                continue
            pod = self._pending.pop(name)
            self._cluster.set_node_ready(name, False)
            self._cluster.set_pod_ready(self._cluster.namespace, pod, False)
            self.turned.append(name)
