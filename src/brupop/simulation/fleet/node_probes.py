"""The simulated nodes' health endpoints: what the health gate's HTTP probes reach in simulate.

A probe whose host is a simulated node's address (its InternalIP, what the gate puts for
`{node_ip}`) or its name (`{node_name}`) answers 200 on any port and path while that Node is
Ready and its agent pod runs and is Ready, as kube-proxy's `/healthz` on a healthy node would;
while the Node is NotReady (the `--unhealthy` scenario) or its agent is down, it is refused.
Every other host is refused, like an address nothing listens on. The address allowance is applied
first, exactly as the real prober applies it (`Reach`): a refused address is never reached.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from brupop.adapters.memory.gates import Reach
from brupop.cli.fleet_description.nodes import AGENT_COMPONENT, AGENT_DAEMONSET
from brupop.domain.cluster.objects import COMPONENT_LABEL, Node, Pod, PodPhase
from brupop.domain.policy.address_allowance import host_key
from brupop.domain.safety.gate_checks import ProbeAnswer
from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.ports.errors import PortError
from brupop.ports.monitoring.http_prober import HttpProber

HEALTHY_STATUS = 200
REFUSED = "connection refused"


class SimulatedNodeProber:
    """Probes answered by the simulated nodes themselves, read through the cluster's ports."""

    def __init__(
        self, nodes: NodeRepository, pods: PodRepository, reach: Reach | None = None
    ) -> None:
        self._nodes = nodes
        self._pods = pods
        self._reach = reach or Reach()

    def probe(self, url: str, timeout_seconds: float) -> ProbeAnswer:
        refusal = self._reach.refusal(url)
        if refusal is not None:
            return ProbeAnswer(error=refusal)
        host = host_key(urlsplit(url).hostname or "")
        try:
            node = self._node_at(host)
            healthy = node is not None and node.ready and self._agent_runs(node)
        except PortError as error:
            return ProbeAnswer(error=f"no answer: {error}")
        return ProbeAnswer(status=HEALTHY_STATUS) if healthy else ProbeAnswer(error=REFUSED)

    def _node_at(self, host: str) -> Node | None:
        """The node whose name or InternalIP `host` is; None when no node is there."""
        address = _address(host)
        for node in self._nodes.list().items:
            if host == node.name or (address is not None and address == _address(node.internal_ip)):
                return node
        return None

    def _agent_runs(self, node: Node) -> bool:
        """The node's agent pod (its DaemonSet's) is Running and Ready."""
        return any(_is_running_agent(pod) for pod in self._pods.list_on_node(node.name))


def _is_running_agent(pod: Pod) -> bool:
    is_agent = pod.labels.get(COMPONENT_LABEL) == AGENT_COMPONENT and any(
        owner.kind == "DaemonSet" and owner.name == AGENT_DAEMONSET for owner in pod.owners
    )
    return is_agent and pod.phase is PodPhase.RUNNING and pod.ready and not pod.terminating


def _address(text: str | None) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host_key(text or ""))
    except ValueError:
        return None


_: type[HttpProber] = SimulatedNodeProber
