"""Reaching the real cluster: the kubeconfig's administrator (simulate's own harness), and
clients that act as the chart's ServiceAccounts with TokenRequest tokens, so the controller and
the apiserver meet RBAC as they would in a pod.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes.client import ApiClient, Configuration, CoreV1Api
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError

from brupop.adapters.kubernetes.api.errors import no_answer
from brupop.adapters.kubernetes.cluster import bounded
from brupop.cli.cluster_loader import ClusterSilent, ClusterTarget, reach_cluster
from brupop.cli.fleet_description.simulated_cluster import ClusterRefused

AGENT_AUDIENCE = "brupop-apiserver"
_CONNECT_SECONDS = 10.0


@dataclass(frozen=True)
class ClusterAccess:
    """The cluster's address and CA, and an administrator's client for the harness."""

    host: str
    ca_file: str | None
    admin: ApiClient

    @property
    def core(self) -> CoreV1Api:
        return CoreV1Api(self.admin)

    def as_service_account(self, namespace: str, name: str, seconds: int) -> ApiClient:
        """A client with a fresh token of that ServiceAccount (the API server's audience)."""
        token = self.token(namespace, name, {"expirationSeconds": seconds})
        configuration = bounded(Configuration())
        configuration.host = self.host
        configuration.ssl_ca_cert = self.ca_file
        # The whole header value: client 36 reads this key, but not its prefix, any more.
        configuration.api_key = {"authorization": f"Bearer {token}"}
        return ApiClient(configuration)

    def pod_token(self, namespace: str, pod: str, uid: str, seconds: int, account: str) -> str:
        """A token of `account` bound to that pod, for the brupop apiserver's audience, as the
        agent's projected volume would hold."""
        bound = {"kind": "Pod", "apiVersion": "v1", "name": pod, "uid": uid}
        spec = {
            "audiences": [AGENT_AUDIENCE],
            "expirationSeconds": seconds,
            "boundObjectRef": bound,
        }
        return self.token(namespace, account, spec)

    def token(self, namespace: str, account: str, spec: dict[str, Any]) -> str:
        answer = self.core.create_namespaced_service_account_token(
            account, namespace, {"spec": spec}
        )
        return str(answer.status.token)

    def close(self) -> None:
        self.admin.close()


def connect(kubeconfig: Path, context: str | None = None) -> ClusterAccess:
    """The kubeconfig's context, reached as every command reaches it (ClusterUnusable when it
    cannot be used or does not answer); ClusterRefused when it refuses simulate's reads."""
    configuration = reach_cluster(ClusterTarget(kubeconfig, context), _CONNECT_SECONDS)
    access = ClusterAccess(configuration.host, configuration.ssl_ca_cert, ApiClient(configuration))
    try:
        access.core.list_node(limit=1, _request_timeout=_CONNECT_SECONDS)
    except ApiException as error:
        access.close()
        raise ClusterRefused(
            f"--kubeconfig: {configuration.host} refused simulate ({error.status} {error.reason})"
        ) from None
    except (HTTPError, OSError) as error:
        access.close()
        raise ClusterSilent(
            f"the Kubernetes API at {configuration.host} stopped answering ({no_answer(error)})"
        ) from None
    return access
