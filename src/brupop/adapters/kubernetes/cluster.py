"""KubernetesCluster: every cluster port over the official client, shaped like InMemoryCluster.

The controller and the apiserver choose it with BRUPOP_CLUSTER=kubernetes. Configuration comes
from the pod's service account when running in a cluster, else from a kubeconfig
($KUBECONFIG or ~/.kube/config), as kubectl and client-go do.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from kubernetes import config as kube_config
from kubernetes.client import ApiClient, Configuration
from kubernetes.config.config_exception import ConfigException

from brupop.adapters.kubernetes.api.calls import ApiCalls
from brupop.adapters.kubernetes.api.kubeconfig import KubeconfigUnusable, load_kubeconfig
from brupop.adapters.kubernetes.resources.events import KubernetesEventRecorder
from brupop.adapters.kubernetes.resources.leases import KubernetesLeaseStore
from brupop.adapters.kubernetes.resources.nodes import KubernetesNodeRepository
from brupop.adapters.kubernetes.resources.pods import KubernetesPodRepository
from brupop.adapters.kubernetes.resources.shadows import KubernetesShadowRepository
from brupop.adapters.kubernetes.resources.update_policies import KubernetesUpdatePolicyRepository
from brupop.adapters.kubernetes.resources.workloads import KubernetesWorkloadReplicas
from brupop.adapters.kubernetes.tokens.agent_pods import KubernetesAgentPods
from brupop.adapters.kubernetes.tokens.service_accounts import KubernetesServiceAccounts
from brupop.adapters.kubernetes.tokens.token_reviewer import KubernetesTokenReviewer
from brupop.adapters.system.clock import SystemClock
from brupop.ports.errors import UnavailableError

if TYPE_CHECKING:
    from brupop.adapters.kubernetes.tokens.token_verifier import KubernetesTokenVerifier

CONNECTIONS = 16
"""Connections kept to the Kubernetes API: the watches (shadows, Nodes, policies), the token
reviews (TOKEN_REVIEW_THREADS, 8) and a pass's calls. The client's default is five per CPU of
the host, which on a 96-core node is 480, whatever the pod's CPU limit."""


REQUEST_TIMEOUT_SECONDS = 30.0
CONNECT_TIMEOUT_SECONDS = 5.0


def load_configuration(kubeconfig: str | None = None, context: str | None = None) -> Configuration:
    """In-cluster service-account configuration, else the kubeconfig's current context; a
    `kubeconfig` file or a `context` named means that kubeconfig, in a pod too.

    KubeconfigUnusable (an UnavailableError) when a kubeconfig exists but cannot be used.
    """
    configuration = bounded(Configuration())
    if kubeconfig is not None or context is not None:
        load_kubeconfig(configuration, kubeconfig, context)
        return configuration
    try:
        kube_config.load_incluster_config(client_configuration=configuration)
    except ConfigException as in_cluster:
        try:
            load_kubeconfig(configuration)
        except KubeconfigUnusable:
            raise
        except UnavailableError as kubeconfig:
            raise UnavailableError(
                f"no Kubernetes configuration: not in a pod ({in_cluster}) and {kubeconfig}"
            ) from None
    return configuration


def bounded(configuration: Configuration) -> Configuration:
    """No silent retries, and a pool of CONNECTIONS.

    The client leaves `retries` unset, so urllib3 retries a timed-out or dropped request three
    more times: a 30 s read timeout became 120 s, a Lease renew outlived its lease, and a PUT
    was sent again with a stale resourceVersion. Every caller here retries on its own terms.
    """
    configuration.retries = False
    configuration.connection_pool_maxsize = CONNECTIONS
    return configuration


def _calls(api_client: ApiClient, timeout_seconds: float) -> ApiCalls:
    """Calls that wait at most `timeout_seconds` for anything, connecting included."""
    return ApiCalls(
        api_client,
        request_timeout_seconds=timeout_seconds,
        connect_timeout_seconds=min(CONNECT_TIMEOUT_SECONDS, timeout_seconds),
    )


class KubernetesCluster:
    """Shadows, update policies, nodes, pods, token reviews, leases and events of a real
    cluster."""

    def __init__(
        self,
        api_client: ApiClient,
        namespace: str,
        *,
        component: str = "brupop",
        request_timeout_seconds: float = REQUEST_TIMEOUT_SECONDS,
        lease_timeout_seconds: float | None = None,
    ) -> None:
        """`request_timeout_seconds` bounds each wait of a call (connecting, then each read);
        the Lease's calls get `lease_timeout_seconds` (None: the same)."""
        self.namespace = namespace
        self.api_client = api_client
        calls = _calls(api_client, request_timeout_seconds)
        lease_calls = _calls(api_client, lease_timeout_seconds or request_timeout_seconds)
        self.shadows = KubernetesShadowRepository(calls, namespace)
        self.policies = KubernetesUpdatePolicyRepository(calls, namespace)
        self.nodes = KubernetesNodeRepository(calls)
        self.pods = KubernetesPodRepository(calls)
        self.workloads = KubernetesWorkloadReplicas(calls)
        self.token_reviewer = KubernetesTokenReviewer(calls)
        self.agent_pods = KubernetesAgentPods(calls, namespace)
        self.service_accounts = KubernetesServiceAccounts(calls, namespace)
        self._calls = calls
        self.leases = KubernetesLeaseStore(lease_calls)
        self.events = KubernetesEventRecorder(calls, component=component)

    @cached_property
    def token_verifier(self) -> KubernetesTokenVerifier:
        """Local verification of agents' tokens, built when first asked for: PyJWT and
        cryptography (about 8 MiB) are loaded only by the process that verifies (the apiserver)."""
        from brupop.adapters.kubernetes.tokens.issuer_keys import KubernetesIssuerKeys
        from brupop.adapters.kubernetes.tokens.token_verifier import KubernetesTokenVerifier

        keys = KubernetesIssuerKeys(self._calls, SystemClock())
        return KubernetesTokenVerifier(keys, SystemClock())

    @classmethod
    def from_environment(
        cls,
        namespace: str,
        *,
        component: str = "brupop",
        request_timeout_seconds: float = REQUEST_TIMEOUT_SECONDS,
        lease_timeout_seconds: float | None = None,
    ) -> KubernetesCluster:
        """The cluster this process runs in (or the kubeconfig's), for brupop's `namespace`."""
        return cls(
            ApiClient(load_configuration()),
            namespace,
            component=component,
            request_timeout_seconds=request_timeout_seconds,
            lease_timeout_seconds=lease_timeout_seconds,
        )

    def close(self) -> None:
        """Release the client's connection pool."""
        self.api_client.close()
