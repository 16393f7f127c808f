"""The rights the chart grants brupop's ServiceAccounts: what the RBAC check asks for. A unit
test holds this table to the rendered manifest, so the two cannot drift apart."""

from __future__ import annotations

from dataclasses import dataclass

CONTROLLER_ACCOUNT = "brupop-controller-service-account"
APISERVER_ACCOUNT = "brupop-apiserver-service-account"
BRUPOP = "brupop.bottlerocket.aws"
OWN_NAMESPACE = "<brupop>"  # stands for brupop's namespace, whatever it is
EVENTS_NAMESPACE = "default"  # Events about Nodes go to `default`
CLUSTER = ""


@dataclass(frozen=True)
class Grant:
    """`account` may `verbs` on `group`/`resource` in `namespace` (CLUSTER: cluster-wide)."""

    account: str
    namespace: str
    group: str
    resource: str
    verbs: tuple[str, ...]


def _grants(account: str, namespace: str, rules: list[tuple[str, str, str]]) -> list[Grant]:
    return [Grant(account, namespace, g, r, tuple(v.split())) for g, r, v in rules]


GRANTS: tuple[Grant, ...] = (
    *_grants(
        APISERVER_ACCOUNT,
        CLUSTER,
        [
            ("", "nodes", "get patch"),
            ("", "pods", "get list delete"),
            ("", "pods/eviction", "create"),
            ("policy", "poddisruptionbudgets", "list"),
            ("apps", "replicasets", "get"),
            ("apps", "statefulsets", "get"),
            ("", "replicationcontrollers", "get"),
            ("authentication.k8s.io", "tokenreviews", "create"),
        ],
    ),
    *_grants(
        APISERVER_ACCOUNT,
        OWN_NAMESPACE,
        [
            (BRUPOP, "bottlerocketshadows", "create get list watch"),
            (BRUPOP, "bottlerocketshadows/status", "patch"),
            (BRUPOP, "bottlerocketupdatepolicies", "get"),
            ("", "pods", "list watch"),  # the agent pod mirror of local token verification
            ("", "serviceaccounts", "get list watch"),  # its ServiceAccount mirror
        ],
    ),
    *_grants(APISERVER_ACCOUNT, EVENTS_NAMESPACE, [("", "events", "create")]),
    *_grants(
        CONTROLLER_ACCOUNT,
        CLUSTER,
        [
            ("", "nodes", "get list watch patch"),
            ("", "pods", "list"),
            ("policy", "poddisruptionbudgets", "list"),
            ("apps", "replicasets", "get"),
            ("apps", "statefulsets", "get"),
            ("", "replicationcontrollers", "get"),
        ],
    ),
    *_grants(
        CONTROLLER_ACCOUNT,
        OWN_NAMESPACE,
        [
            (BRUPOP, "bottlerocketshadows", "get list watch patch delete"),
            (BRUPOP, "bottlerocketshadows/status", "patch"),
            (BRUPOP, "bottlerocketupdatepolicies", "get list watch"),
            (BRUPOP, "bottlerocketupdatepolicies/status", "patch"),
            ("coordination.k8s.io", "leases", "get create update"),
            ("", "events", "create"),
        ],
    ),
)


def in_namespace(grant: Grant, namespace: str) -> str:
    """The grant's namespace with OWN_NAMESPACE made `namespace`."""
    return namespace if grant.namespace == OWN_NAMESPACE else grant.namespace
