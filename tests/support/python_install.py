"""brupop for Python put over the original's install on a real control plane, as the migration
rehearsal needs it: the chart rendered by `helm template` with the original's value names, the
CRDs replaced in place, the apiserver and controller run in this process as the chart's
ServiceAccounts with the rendered environment, and one real `brupop agent` process per node
(with the host emulator), each started only when its node's original agent pod is replaced.

kube-apiserver will not proxy to loopback, so the shadow CRD's webhook is a `url` to the
apiserver on 127.0.0.1 rather than the chart's Service: the one difference from `helm upgrade`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.adapters.system.clock import SystemClock
from brupop.cli.crd.install import install_crds
from brupop.cli.fleet_description.nodes import SimulatedNode
from brupop.domain.cluster.objects import OwnerReference
from brupop.entrypoints.apiserver.container import EVENT_COMPONENT as APISERVER_COMPONENT
from brupop.entrypoints.controller.container import EVENT_COMPONENT as CONTROLLER_COMPONENT
from brupop.entrypoints.controller.container import build_controller
from brupop.entrypoints.controller.settings import ControllerSettings
from brupop.hostsim.control import seed_host
from brupop.services.controller.service import ControllerService
from brupop.simulation.flags.options import SimulationOptions
from brupop.simulation.fleet import components
from brupop.simulation.fleet.agent_env import agent_argv, agent_env, default_apiclient
from brupop.simulation.fleet.certificates import LOOPBACK_HOST, TlsFiles
from brupop.simulation.fleet.real_cluster.connection import ClusterAccess
from brupop.simulation.fleet.real_cluster.fleet_objects import ApiFleet
from brupop.simulation.fleet.supervisor import AgentSpec, AgentSupervisor
from tests.deploy.rendering import Helm, fetch_helm
from tests.support.control_plane.chart_install import apply_chart
from tests.support.original_install import NAMESPACE, OriginalNode
from tests.support.ports import free_port

AGENT_ACCOUNT = "brupop-agent-service-account"
AGENT_DAEMONSET = OwnerReference(kind="DaemonSet", name="brupop-agent", controller=True)
AGENT_LABELS = {"brupop.bottlerocket.aws/component": "agent"}
TOKEN_SECONDS = 3600
Doc = dict[str, Any]


def rendered_chart(values: Mapping[str, Any]) -> list[Doc]:
    """brupop for Python's chart rendered by `helm template` with `values`."""
    text = Helm(fetch_helm()).template(values)
    return [doc for doc in yaml.safe_load_all(text) if isinstance(doc, dict)]


def container_env(documents: list[Doc], kind: str, name: str) -> dict[str, str]:
    """The plain (`value:`) environment of the first container of the workload `kind/name`."""
    [workload] = [d for d in documents if d["kind"] == kind and d["metadata"]["name"] == name]
    container = workload["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: str(e["value"]) for e in container.get("env", []) if "value" in e}


def install_over_original(api: client.ApiClient, tls: TlsFiles) -> int:
    """The chart's RBAC, then both CRDs replacing the original's in place (same name, group and
    versions), converted by an apiserver that will listen on the returned loopback port."""
    apply_chart(api)  # the shadow CRD exists (the original's): only RBAC and the policy CRD
    port = free_port()
    install_crds(api, f"https://{LOOPBACK_HOST}:{port}/crdconvert", tls.ca_cert.read_bytes())
    return port


def start_apiserver(access: ClusterAccess, tls: TlsFiles, port: int) -> components.RunningApiserver:
    """brupop for Python's apiserver on 127.0.0.1:`port`, as its ServiceAccount."""
    api = access.as_service_account(NAMESPACE, "brupop-apiserver-service-account", TOKEN_SECONDS)
    cluster = KubernetesCluster(api, NAMESPACE, component=APISERVER_COMPONENT)
    return components.start_apiserver(
        cluster, tls, SimulationOptions(), namespace=NAMESPACE, port=port
    )


def controller_from_env(access: ClusterAccess, env: Mapping[str, str]) -> ControllerService:
    """A controller replica configured by the rendered Deployment's environment (shortened
    loop and Lease timing for a test), as the controller's ServiceAccount."""
    quick = {
        "MY_NODE_NAME": "control-node",
        "BRUPOP_NAMESPACE": NAMESPACE,
        "CONTROLLER_TICK_SECONDS": "0.5",
        "LEADER_ELECTION_LEASE_SECONDS": "4",
        "LEADER_ELECTION_RENEW_SECONDS": "1",
    }
    settings = ControllerSettings.model_validate(dict(env) | quick)
    config = settings.controller_config(datetime.now(UTC), identity="brupop-controller-migrated")
    api = access.as_service_account(NAMESPACE, "brupop-controller-service-account", TOKEN_SECONDS)
    cluster = KubernetesCluster(api, NAMESPACE, component=CONTROLLER_COMPONENT)
    return build_controller(cluster, config, SystemClock())


@dataclass
class AgentRollout:
    """The DaemonSet's rolling update, played by hand: per node, the original's agent pod is
    deleted and a new pod (same DaemonSet) gets a real `brupop agent` with a bound token."""

    fleet: ApiFleet
    core: client.CoreV1Api
    work_dir: Path
    apiserver_url: str
    tls: TlsFiles
    agent_env: Mapping[str, str]
    supervisors: dict[str, AgentSupervisor] = field(default_factory=dict)

    def replace(self, node: OriginalNode, original_pod: str) -> AgentSupervisor:
        """Swap `node`'s agent; its emulated host is the one the original left there."""
        self.core.delete_namespaced_pod(original_pod, NAMESPACE, grace_period_seconds=0)
        pod = f"brupop-agent-py-{node.name}"
        self.fleet.add_pod(
            NAMESPACE,
            pod,
            node.name,
            labels=AGENT_LABELS,
            owners=(AGENT_DAEMONSET,),
            service_account=AGENT_ACCOUNT,
        )
        directory = self.work_dir / "nodes" / node.name
        host_dir = directory / "host"
        host_dir.mkdir(parents=True, exist_ok=True)
        seed_host(
            str(host_dir),
            node_name=node.name,
            current_version=node.host_version,
            offered_version=node.target_version,
        )
        token = directory / "token"
        token.write_text(self.fleet.issue_token(NAMESPACE, pod, ttl_seconds=TOKEN_SECONDS))
        token.chmod(0o600)
        simulated = SimulatedNode(node.name, pod, token, host_dir)
        env = dict(self.agent_env) | agent_env(
            simulated,
            SimulationOptions(),
            apiserver_url=self.apiserver_url,
            tls=self.tls,
            apiclient=default_apiclient(self.work_dir),
            namespace=NAMESPACE,
        )
        spec = AgentSpec(node.name, agent_argv(), env, self.work_dir / f"{node.name}.log")
        supervisor = AgentSupervisor([spec], restart_backoff=0.2, restart_backoff_max=1.0)
        supervisor.start()
        self.supervisors[node.name] = supervisor
        return supervisor

    def stop(self) -> None:
        for supervisor in self.supervisors.values():
            supervisor.stop(grace_seconds=5.0)
