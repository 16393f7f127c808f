"""The fleet as real objects: kwok Nodes opted in to brupop, one agent pod per Node (bound by
`spec.nodeName`, run as the agent's ServiceAccount), its shadow, and a TokenRequest token bound
to the pod for the brupop apiserver's audience. Created in batches by a pool of threads."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from kubernetes.client import AppsV1Api, CoreV1Api, CustomObjectsApi
from kubernetes.client.exceptions import ApiException

from brupop.adapters.kubernetes.resources.shadow_objects import (
    GROUP,
    PLURAL,
    VERSION,
    new_shadow_object,
)
from brupop.domain.cluster.objects import COMPONENT_LABEL
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE
from brupop.simulation.fleet.real_cluster.connection import ClusterAccess

NAMESPACE = "brupop-bottlerocket-aws"
AGENT_ACCOUNT = "brupop-agent-service-account"
BENCH_LABEL = "brupop.bottlerocket.aws/bench"
KWOK_ANNOTATION = "kwok.x-k8s.io/node"
IMAGE = "registry.invalid/brupop-bench:1"  # never pulled: kwok plays the kubelet
TOKEN_SECONDS = 6 * 3600
T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class FleetNode:
    """One node as an agent sees it: its name, UID and pod token."""

    name: str
    uid: str
    token: str


def node_name(index: int) -> str:
    return f"bench-node-{index:05d}"


def node_body(name: str) -> dict[str, Any]:
    amounts = {"cpu": "8", "memory": "16Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {OPT_IN_LABEL: OPT_IN_VALUE, BENCH_LABEL: "true"},
            "annotations": {KWOK_ANNOTATION: "fake"},
        },
        "status": {"allocatable": amounts, "capacity": dict(amounts)},
    }


def daemon_set_body() -> dict[str, Any]:
    """The agents' owner, so a drain leaves them (as it leaves the chart's DaemonSet pods);
    its selector matches no Node, so nothing runs its pods but this rig."""
    labels = {COMPONENT_LABEL: "agent", BENCH_LABEL: "true"}
    template = {
        "metadata": {"labels": labels},
        "spec": {
            "nodeSelector": {BENCH_LABEL: "no-node"},
            "containers": [{"name": "agent", "image": IMAGE}],
        },
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "brupop-bench-agent", "namespace": NAMESPACE},
        "spec": {"selector": {"matchLabels": labels}, "template": template},
    }


def agent_pod_body(node: str, owner_uid: str) -> dict[str, Any]:
    owner = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "name": "brupop-bench-agent",
        "uid": owner_uid,
        "controller": True,
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"agent-{node}",
            "namespace": NAMESPACE,
            "labels": {COMPONENT_LABEL: "agent", BENCH_LABEL: "true"},
            "ownerReferences": [owner],
        },
        "spec": {
            "nodeName": node,
            "serviceAccountName": AGENT_ACCOUNT,
            "automountServiceAccountToken": False,
            "containers": [{"name": "agent", "image": IMAGE}],
        },
    }


def in_parallel(work: Callable[[T], R], items: Iterable[T], threads: int) -> list[R]:
    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(work, items))


class FleetBuilder:
    """Creates the objects of nodes [first, first + count) and mints their tokens."""

    def __init__(self, access: ClusterAccess, threads: int = 16) -> None:
        self._access = access
        self._core = CoreV1Api(access.admin)
        self._custom = CustomObjectsApi(access.admin)
        self._threads = threads
        self._owner_uid = ""

    def build(self, names: list[str], *, shadows: bool = True) -> list[FleetNode]:
        """Nodes, agent pods, shadows (unless `shadows` is False: a real agent makes its own)
        and tokens, each kind as one parallel batch."""
        if not self._owner_uid:
            self._owner_uid = self._daemon_set()
        uids = in_parallel(self._node, names, self._threads)
        pod_uids = in_parallel(self._pod, names, self._threads)
        if shadows:
            in_parallel(
                lambda pair: self._shadow(*pair),
                list(zip(names, uids, strict=False)),
                self._threads,
            )
        tokens = in_parallel(
            lambda pair: self._token(*pair), list(zip(names, pod_uids, strict=False)), 16
        )
        return [FleetNode(n, u, t) for n, u, t in zip(names, uids, tokens, strict=False)]

    def _node(self, name: str) -> str:
        return str(_create(self._core.create_node, self._core.read_node, name, node_body(name)))

    def _daemon_set(self) -> str:
        apps = AppsV1Api(self._access.admin)
        body = daemon_set_body()
        try:
            return str(apps.create_namespaced_daemon_set(NAMESPACE, body).metadata.uid)
        except ApiException as error:
            if error.status != 409:
                raise
            return str(
                apps.read_namespaced_daemon_set(body["metadata"]["name"], NAMESPACE).metadata.uid
            )

    def _pod(self, name: str) -> str:
        body = agent_pod_body(name, self._owner_uid)
        pod = body["metadata"]["name"]
        try:
            return str(self._core.create_namespaced_pod(NAMESPACE, body).metadata.uid)
        except ApiException as error:
            if error.status != 409:
                raise
            return str(self._core.read_namespaced_pod(pod, NAMESPACE).metadata.uid)

    def _shadow(self, name: str, uid: str) -> None:
        body = new_shadow_object(NAMESPACE, name, uid)
        try:
            self._custom.create_namespaced_custom_object(GROUP, VERSION, NAMESPACE, PLURAL, body)
        except ApiException as error:
            if error.status != 409:
                raise

    def _token(self, name: str, pod_uid: str) -> str:
        return self._access.pod_token(
            NAMESPACE, f"agent-{name}", pod_uid, TOKEN_SECONDS, AGENT_ACCOUNT
        )


def _create(create: Callable[[Any], Any], read: Callable[[str], Any], name: str, body: Any) -> str:
    try:
        return str(create(body).metadata.uid)
    except ApiException as error:
        if error.status != 409:
            raise
        return str(read(name).metadata.uid)


def wait_pods_running(access: ClusterAccess, count: int, seconds: float) -> float:
    """Seconds until kwok has `count` bench agent pods Running; RuntimeError past `seconds`."""
    core = CoreV1Api(access.admin)
    began = time.monotonic()
    while True:
        pods = core.list_namespaced_pod(NAMESPACE, label_selector=f"{BENCH_LABEL}=true")
        running = sum(1 for p in pods.items if p.status and p.status.phase == "Running")
        if running >= count:
            return time.monotonic() - began
        if time.monotonic() - began > seconds:
            raise RuntimeError(f"only {running} of {count} agent pods Running after {seconds} s")
        time.sleep(1.0)


def save_fleet(path: Path, nodes: list[FleetNode]) -> None:
    path.write_text(json.dumps([asdict(n) for n in nodes]))


def load_fleet(path: Path) -> list[FleetNode]:
    return [FleetNode(**entry) for entry in json.loads(path.read_text())]
