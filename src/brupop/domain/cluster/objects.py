"""Cluster objects brupop reads and changes: Nodes, Pods, PodDisruptionBudgets, Leases, Events.

Plain values: the in-memory cluster and the Kubernetes adapters both translate into these.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Generic, TypeVar

from brupop.domain.cluster.disruption_budget import IntOrPercent
from brupop.domain.cluster.label_selector import Requirement

# Re-exported (`as`): the Node and Pod fields below are of these types.
from brupop.domain.cluster.resources import NO_RESOURCES
from brupop.domain.cluster.resources import Resources as Resources
from brupop.domain.cluster.taints import Taint as Taint
from brupop.domain.cluster.taints import Toleration as Toleration

LB_EXCLUSION_LABEL = "node.kubernetes.io/exclude-from-external-load-balancers"
LB_EXCLUSION_VALUE = "True"
COMPONENT_LABEL = "brupop.bottlerocket.aws/component"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
# Annotations brupop writes on a Node to remember what an administrator had done before it.
CORDONED_BY_BRUPOP_ANNOTATION = "brupop.bottlerocket.aws/cordoned-by-brupop"
LB_EXCLUDED_BY_BRUPOP_ANNOTATION = "brupop.bottlerocket.aws/lb-excluded-by-brupop"


@dataclass(frozen=True)
class Node:
    """A cluster Node as brupop sees it."""

    name: str
    uid: str
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    unschedulable: bool = False
    resource_version: str | None = None
    ready: bool = True  # its Ready condition is True (the health gate's nodeReady check)
    internal_ip: str | None = None  # its InternalIP address (a probe URL's {node_ip})
    taints: tuple[Taint, ...] = ()
    created_at: datetime | None = None  # metadata.creationTimestamp
    deleting: bool = False  # metadata.deletionTimestamp is set: the Node is going away
    # status.allocatable CPU and memory; None when absent or unreadable (the capacity check
    # then counts the node as having no room).
    allocatable: Resources | None = None


@dataclass(frozen=True)
class OwnerReference:
    """Who owns a Pod (a DaemonSet, a ReplicaSet, ...)."""

    kind: str
    name: str
    controller: bool = False


class PodPhase(StrEnum):
    """The pod's lifecycle phase."""

    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    UNKNOWN = "Unknown"


@dataclass(frozen=True)
class Pod:
    """A Pod with what drain and authorization need to know."""

    name: str
    namespace: str
    uid: str
    node_name: str | None
    phase: PodPhase = PodPhase.RUNNING
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    owners: tuple[OwnerReference, ...] = ()
    service_account: str | None = None
    terminating: bool = False
    # metadata.deletionTimestamp: when its grace period ends (set by a delete a finalizer holds)
    deletion_timestamp: datetime | None = None
    ready: bool = True  # its Ready condition is True (the health gate's DaemonSet check)
    # What the scheduler reserves for it (resources.effective_request); requests_known is
    # False when a quantity could not be read, and the capacity check then finds no room.
    requests: Resources = NO_RESOURCES
    requests_known: bool = True
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()
    created_at: datetime | None = None  # metadata.creationTimestamp

    @property
    def finished(self) -> bool:
        """It ran to its end (Succeeded or Failed): it takes no room and no drain evicts it."""
        return self.phase in (PodPhase.SUCCEEDED, PodPhase.FAILED)


@dataclass(frozen=True)
class PodDisruptionBudget:
    """A PodDisruptionBudget, named so a blocked drain can say who blocks it.

    Its selector is `selector` (matchLabels) and `expressions` (matchExpressions), all of
    which must hold; a budget with no selector at all (`selects_none`) selects no pod, as in
    policy/v1. Counts are numbers or percentages (`disruption_budget.IntOrPercent`).
    """

    name: str
    namespace: str
    selector: Mapping[str, str] = field(default_factory=dict)
    min_available: IntOrPercent | None = None
    max_unavailable: IntOrPercent | None = None
    expressions: tuple[Requirement, ...] = ()
    selects_none: bool = False

    def selects(self, pod: Pod) -> bool:
        """The budget covers `pod` (same namespace, every label and expression matches)."""
        if self.selects_none or pod.namespace != self.namespace:
            return False
        return all(pod.labels.get(key) == value for key, value in self.selector.items()) and all(
            requirement.matches(pod.labels) for requirement in self.expressions
        )


@dataclass(frozen=True)
class TokenIdentity:
    """What a TokenReview (or a local verification of the token) says about a bearer token."""

    authenticated: bool
    username: str | None = None
    audiences: tuple[str, ...] = ()
    pod_name: str | None = None
    pod_uid: str | None = None
    node_name: str | None = None
    error: str | None = None
    expires_at: datetime | None = None
    node_uid: str | None = None  # a verified token's node claim (kube-apiserver >= 1.32)
    service_account_uid: str | None = None  # a verified token's service account UID claim


@dataclass(frozen=True)
class ServiceAccount:
    """A ServiceAccount: tokens name it by UID, so one re-created under its name is another."""

    name: str
    namespace: str
    uid: str
    deletion_timestamp: datetime | None = None  # metadata.deletionTimestamp


@dataclass(frozen=True)
class Lease:
    """A coordination.k8s.io Lease used for leader election."""

    name: str
    namespace: str
    holder: str | None
    duration_seconds: int
    acquired_at: datetime | None = None
    renewed_at: datetime | None = None
    transitions: int = 0
    resource_version: str | None = None


class EventType(StrEnum):
    """Kubernetes Event types."""

    NORMAL = "Normal"
    WARNING = "Warning"


class EventSubject(StrEnum):
    """The kind of object an Event is about (its involvedObject)."""

    SHADOW = "BottlerocketShadow"
    UPDATE_POLICY = "BottlerocketUpdatePolicy"
    NODE = "Node"


# Events about a cluster-scoped object (a Node) must live in `default`, as the kubelet's do:
# the Kubernetes API refuses them in any other namespace.
NODE_EVENT_NAMESPACE = "default"


@dataclass(frozen=True)
class ClusterEvent:
    """A notable moment in a node's update, recorded against its shadow; or, with
    `subject=UPDATE_POLICY`, in the fleet's, recorded against the policy object named
    `shadow_name` (which may be gone, as after a deletion); or, with `subject=NODE`, against
    the Node named `shadow_name` (in NODE_EVENT_NAMESPACE), as a forced drain's are."""

    shadow_name: str
    namespace: str
    reason: str
    message: str
    type: EventType = EventType.NORMAL
    subject: EventSubject = EventSubject.SHADOW
    uid: str | None = field(default=None, compare=False)
    """The subject's uid when the caller holds it (a recorder then need not look it up); a
    lookup hint, not part of what the event says, so not compared."""


class WatchEventType(StrEnum):
    """What happened to a watched object."""

    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"


T = TypeVar("T")


@dataclass(frozen=True)
class WatchEvent(Generic[T]):
    """One change seen on a watch, with the resourceVersion to resume after it."""

    type: WatchEventType
    object: T
    resource_version: str | None


@dataclass(frozen=True)
class WatchBookmark:
    """A watch's word that nothing this watch selects changed up to `resource_version`: the
    place to resume from, so a quiet watch does not fall behind the API's watch cache."""

    resource_version: str


@dataclass(frozen=True)
class Listing(Generic[T]):
    """A consistent list of objects and the resourceVersion a watch can resume from."""

    items: tuple[T, ...]
    resource_version: str | None


@dataclass(frozen=True)
class VersionListing:
    """What a complete list shows of each object, its resourceVersion only (by name), and
    the resourceVersion of the list: enough to tell which objects a copy holds out of date
    without reading the objects themselves."""

    versions: dict[str, str | None]
    resource_version: str | None
