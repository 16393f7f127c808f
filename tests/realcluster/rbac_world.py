"""The objects the RBAC tests act on, made by the admin: a kwok Node opted in to brupop, pods on
it in a workload namespace of their own, a PodDisruptionBudget, a ReplicaSet and the update
policy; and the list of every call the controller and the apiserver make, per process."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from kubernetes import client

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.domain.cluster.objects import (
    NODE_EVENT_NAMESPACE,
    ClusterEvent,
    EventSubject,
    Lease,
)
from brupop.domain.policy.update_policy import UpdatePolicySpec
from brupop.domain.policy.update_policy_status import UpdatePolicyStatus
from brupop.domain.safety.evicted_workloads import WorkloadRef
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE, ShadowSpec, ShadowStatus
from brupop.domain.states import UpdateState
from brupop.ports.errors import AlreadyExistsError, NotFoundError
from tests.realcluster.conftest import KWOK_ANNOTATION, ControlPlane, node_ready
from tests.support.control_plane.chart_install import NAMESPACE
from tests.support.polling import wait_until

AUDIENCE = "brupop-apiserver"
Call = Callable[[], object]


@dataclass(frozen=True)
class World:
    """What one test's calls act on."""

    node: str
    node_uid: str
    workloads: str  # the namespace of the pods, the budget and the ReplicaSet
    pods: tuple[str, ...]

    @property
    def shadow(self) -> str:
        return f"brs-{self.node}"


def make_world(plane: ControlPlane, admin: KubernetesCluster) -> World:
    """A Ready opted-in Node with three Ready pods behind a budget that allows one eviction
    (minAvailable: the disruption controller computes maxUnavailable only for pods a
    controller owns)."""
    core = plane.core
    suffix = uuid.uuid4().hex[:6]
    node, workloads = f"rbac-node-{suffix}", f"rbac-work-{suffix}"
    labels = {OPT_IN_LABEL: OPT_IN_VALUE}
    meta = client.V1ObjectMeta(name=node, annotations=KWOK_ANNOTATION, labels=labels)
    created = core.create_node(client.V1Node(metadata=meta))
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=workloads)))
    wait_until(lambda: node_ready(core, node), f"node {node} Ready", seconds=30)
    pods = tuple(f"web-{n}" for n in range(3))
    for pod in pods:
        core.create_namespaced_pod(workloads, _pod(pod, node))
    wait_until(lambda: _all_ready(core, workloads, pods), "the pods Ready", seconds=30)
    budget = client.V1PodDisruptionBudget(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V1PodDisruptionBudgetSpec(
            min_available=2, selector=client.V1LabelSelector(match_labels={"app": "web"})
        ),
    )
    policy = client.PolicyV1Api(plane.api)
    policy.create_namespaced_pod_disruption_budget(workloads, budget)
    wait_until(lambda: _allowed(policy, workloads, "web") == 1, "the budget allows one", seconds=30)
    client.AppsV1Api(plane.api).create_namespaced_replica_set(workloads, _replica_set())
    with contextlib.suppress(AlreadyExistsError):  # another test made it
        admin.policies.create(UpdatePolicySpec())
    return World(node, created.metadata.uid, workloads, pods)


def remove_world(plane: ControlPlane, world: World) -> None:
    """Delete what `make_world` made (the namespace controller empties the namespace)."""
    plane.core.delete_namespace(world.workloads)
    plane.core.delete_node(world.node)


def apiserver_calls(cluster: KubernetesCluster, world: World) -> Iterator[tuple[str, Call]]:
    """Every call `brupop apiserver` makes, in the order of an agent's update."""
    node, shadow, ns = world.node, world.shadow, world.workloads
    status = ShadowStatus(
        current_version="1.0.0", target_version="1.1.0", current_state=UpdateState.IDLE
    )
    yield "review a token", lambda: cluster.token_reviewer.review("not-a-token", (AUDIENCE,))
    yield "read the issuer's keys", cluster.token_verifier.load_keys
    yield "list agent pods", cluster.agent_pods.list
    yield "watch agent pods", lambda: list(cluster.agent_pods.watch(None, 1.0))
    yield "list service accounts", cluster.service_accounts.list
    yield "watch service accounts", lambda: list(cluster.service_accounts.watch(None, 1.0))
    yield "get service account", lambda: _absent(lambda: cluster.service_accounts.get("nobody"))
    yield "get node", lambda: cluster.nodes.get(node)
    yield "get pod", lambda: cluster.pods.get(ns, world.pods[0])
    yield "create shadow", lambda: cluster.shadows.create(node, world.node_uid)
    yield "list shadows", cluster.shadows.list
    yield "watch shadows", lambda: list(cluster.shadows.watch(None, 1.0))
    yield "get shadow", lambda: cluster.shadows.get(shadow)
    yield "update shadow status", lambda: cluster.shadows.update_status(shadow, status)
    yield "get update policy", cluster.policies.get
    yield "label node", lambda: cluster.nodes.set_labels(node, {"rbac-test": "yes"})
    yield "cordon node", lambda: cluster.nodes.set_unschedulable(node, True)
    yield "list pods on node", lambda: cluster.pods.list_on_node(node)
    yield "list budgets", lambda: cluster.pods.list_disruption_budgets(ns)
    yield "get workload", lambda: cluster.workloads.ready_replicas(_replica_set_ref(ns))
    yield "annotate node", lambda: cluster.nodes.set_annotations(node, {"rbac-test": "yes"})
    yield "evict pod", lambda: cluster.pods.evict(ns, world.pods[1])
    yield "delete pod", lambda: cluster.pods.delete(ns, world.pods[2])
    yield "record node event", lambda: cluster.events.record(_event(node, EventSubject.NODE))
    yield "uncordon node", lambda: cluster.nodes.set_unschedulable(node, False)


def controller_calls(cluster: KubernetesCluster, world: World) -> Iterator[tuple[str, Call]]:
    """Every call `brupop controller` makes: its Lease, its mirrors, a pass's reads and writes."""
    node, shadow, opted_in = world.node, world.shadow, {OPT_IN_LABEL: OPT_IN_VALUE}
    lease = f"rbac-lease-{world.node}"
    yield "get lease", lambda: _absent(lambda: cluster.leases.get(NAMESPACE, lease))
    yield "create lease", lambda: cluster.leases.create(_lease(lease))
    yield "renew lease", lambda: cluster.leases.replace(cluster.leases.get(NAMESPACE, lease))
    yield "list shadows", cluster.shadows.list
    yield "list shadow versions", cluster.shadows.list_versions
    yield "watch shadows", lambda: list(cluster.shadows.watch(None, 1.0))
    yield "list nodes", lambda: cluster.nodes.list(opted_in)
    yield "list node versions", lambda: cluster.nodes.list_versions(opted_in)
    yield "watch nodes", lambda: list(cluster.nodes.watch(None, 1.0, opted_in))
    yield "list all nodes", cluster.nodes.list
    yield "get node", lambda: cluster.nodes.get(node)
    yield "read update policies", cluster.policies.read
    yield "watch update policies", lambda: list(cluster.policies.watch(None, 1.0))
    yield "get update policy", cluster.policies.get
    yield "update policy status", lambda: cluster.policies.update_status(UpdatePolicyStatus())
    yield "list all pods", cluster.pods.list_all
    yield "list all budgets", cluster.pods.list_all_disruption_budgets
    yield "list budgets", lambda: cluster.pods.list_disruption_budgets(world.workloads)
    yield "list pods on node", lambda: cluster.pods.list_on_node(node)
    yield (
        "get workload",
        lambda: cluster.workloads.ready_replicas(_replica_set_ref(world.workloads)),
    )
    yield "get shadow", lambda: cluster.shadows.get(shadow)
    yield "write spec", lambda: cluster.shadows.replace_spec(shadow, _spec(), None)
    yield "write failure status", lambda: _failure(cluster, shadow)
    yield "annotate node", lambda: cluster.nodes.set_annotations(node, {"rbac-hook": "asked"})
    yield "label node", lambda: cluster.nodes.set_labels(node, {"rbac-hook": None})
    yield "uncordon node", lambda: cluster.nodes.set_unschedulable(node, False)
    yield "record shadow event", lambda: cluster.events.record(_event(shadow, EventSubject.SHADOW))
    yield (
        "record policy event",
        lambda: cluster.events.record(_event("default", EventSubject.UPDATE_POLICY)),
    )
    yield "delete shadow", lambda: cluster.shadows.delete(shadow)


def recorded_events(plane: ControlPlane, namespace: str, reason: str) -> list[client.CoreV1Event]:
    """The Events of `reason` in `namespace`, as the admin sees them."""
    events = plane.core.list_namespaced_event(namespace).items or []
    return [event for event in events if event.reason == reason]


def event_reason(subject: EventSubject) -> str:
    return f"RbacCheck{subject.name.title().replace('_', '')}"


def _event(name: str, subject: EventSubject) -> ClusterEvent:
    namespace = NODE_EVENT_NAMESPACE if subject is EventSubject.NODE else NAMESPACE
    return ClusterEvent(
        shadow_name=name,
        namespace=namespace,
        reason=event_reason(subject),
        message="recorded by the RBAC test",
        subject=subject,
    )


def _failure(cluster: KubernetesCluster, shadow: str) -> object:
    fresh = cluster.shadows.get(shadow)
    assert fresh.status is not None
    failed = fresh.status.model_copy(update={"crash_count": fresh.status.crash_count + 1})
    return cluster.shadows.update_status(shadow, failed)


def _spec() -> ShadowSpec:
    return ShadowSpec(
        state=UpdateState.STAGED_AND_PERFORMED_UPDATE,
        state_transition_timestamp=datetime.now(UTC),
        version="1.1.0",
    )


def _lease(name: str) -> Lease:
    now = datetime.now(UTC)
    return Lease(name, NAMESPACE, "rbac-test", 15, acquired_at=now, renewed_at=now)


def _absent(call: Call) -> object:
    try:
        return call()
    except NotFoundError:
        return None


def _replica_set_ref(namespace: str) -> WorkloadRef:
    return WorkloadRef("ReplicaSet", namespace, "web")


def _pod(name: str, node: str) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={"app": "web"}),
        spec=client.V1PodSpec(
            node_name=node,
            service_account_name="default",
            containers=[client.V1Container(name="web", image="registry.invalid/web:1")],
        ),
    )


def _replica_set() -> client.V1ReplicaSet:
    selector = client.V1LabelSelector(match_labels={"app": "web"})
    template = client.V1PodTemplateSpec(
        metadata=client.V1ObjectMeta(labels={"app": "web"}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="web", image="web:1")]),
    )
    return client.V1ReplicaSet(
        metadata=client.V1ObjectMeta(name="web"),
        spec=client.V1ReplicaSetSpec(replicas=0, selector=selector, template=template),
    )


def _all_ready(core: client.CoreV1Api, namespace: str, names: tuple[str, ...]) -> bool:
    pods = {pod.metadata.name: pod for pod in core.list_namespaced_pod(namespace).items}
    return all(
        name in pods
        and any(
            c.type == "Ready" and c.status == "True" for c in pods[name].status.conditions or []
        )
        for name in names
    )


def _allowed(policy: client.PolicyV1Api, namespace: str, name: str) -> int | None:
    status = policy.read_namespaced_pod_disruption_budget(name, namespace).status
    return status.disruptions_allowed if status is not None else None
