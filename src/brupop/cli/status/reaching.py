"""How `brupop status` reaches the controller's `/status`: straight to a URL, or through the
Kubernetes API's service proxy (what `kubectl get --raw` would use), so a laptop with a
kubeconfig needs no port-forward. Every failure becomes one sentence that says what to do.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from kubernetes.client import ApiClient, Configuration, CoreV1Api
from kubernetes.client.exceptions import ApiException

from brupop.adapters.http.bounded_get import BoundedGet, BoundedGetError
from brupop.adapters.kubernetes.api.calls import ApiCalls
from brupop.domain.policy.address_allowance import AddressAllowance, host_key
from brupop.ports.errors import (
    ForbiddenError,
    NotFoundError,
    PortError,
    UnauthorizedError,
    UnavailableError,
)

CONTROLLER_SERVICE = "brupop-controller-server"
# The chart's Service port by number, not by its name (`main`): given a number, kube-apiserver
# reads the Service first, so a missing one is a 404 ("is brupop installed there?"), where a
# name goes straight to the endpoints and a missing Service reads as "no endpoints available".
CONTROLLER_SERVICE_PORT = "80"
LOCAL_URL = "http://127.0.0.1:8080"
# 10,000 nodes make about 5 MB of status; far more is no controller's.
STATUS_MAX_BYTES = 64 * 1024 * 1024


class StatusUnavailable(Exception):
    """The controller (its status or metrics) could not be read; the message says why and
    what to do."""


@dataclass(frozen=True)
class ControllerServiceAddress:
    """The controller's Service, as the API server's proxy names it."""

    namespace: str
    name: str = CONTROLLER_SERVICE
    port: str = CONTROLLER_SERVICE_PORT

    @property
    def proxy_name(self) -> str:
        """`scheme:name:port`, the form the proxy subresource takes."""
        return f"http:{self.name}:{self.port}"

    def port_forward_hint(self) -> str:
        """The kubectl command that makes the controller answer at LOCAL_URL."""
        return f"kubectl -n {self.namespace} port-forward svc/{self.name} 8080:80"


def read_url(url: str, timeout: float) -> dict[str, Any]:
    """GET `<url>/status` and return its JSON object."""
    target = url.rstrip("/") + "/status"
    body = read_controller(target, timeout, STATUS_MAX_BYTES)
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        document = None
    if not isinstance(document, dict):
        raise StatusUnavailable(f"{target} did not answer with the controller's status")
    return document


def read_controller(target: str, timeout: float, limit: int) -> bytes:
    """The body of a 200 answer to GET `target`, the whole exchange within `timeout` seconds
    and `limit` bytes (a server that trickles its answer cannot hold the command). The user
    named the host, so any address it has may be reached, loopback included."""
    named = AddressAllowance(hosts=frozenset({host_key(urlsplit(target).hostname or "")}))
    try:
        answer = BoundedGet(named).get(target, timeout, limit=limit)
    except (BoundedGetError, ValueError) as error:
        raise StatusUnavailable(f"cannot read {target}: {error}") from None
    if answer.status != 200:
        raise StatusUnavailable(f"cannot read {target}: HTTP {answer.status}")
    if answer.truncated:
        raise StatusUnavailable(f"cannot read {target}: larger than {limit} bytes")
    return answer.body


def read_through_api(
    configuration: Configuration, service: ControllerServiceAddress, timeout: float
) -> dict[str, Any]:
    """GET the controller's `/status` through the API server's service proxy."""
    api_client = ApiClient(configuration)
    try:
        calls = ApiCalls(
            api_client, request_timeout_seconds=timeout, connect_timeout_seconds=timeout
        )
        proxy = CoreV1Api(api_client).connect_get_namespaced_service_proxy_with_path
        return calls.json(
            "read the controller's status", proxy, service.proxy_name, service.namespace, "status"
        )
    except PortError as error:
        raise StatusUnavailable(_advice(error, service, str(configuration.host))) from None
    finally:
        api_client.close()


def _advice(error: PortError, service: ControllerServiceAddress, host: str) -> str:
    where = f"Service {service.namespace}/{service.name}"
    if isinstance(error, NotFoundError):
        return (
            f"the Kubernetes API at {host} has no {where}: is brupop installed in namespace "
            f"{service.namespace!r}? (pass --namespace)"
        )
    if isinstance(error, UnauthorizedError | ForbiddenError):
        return (
            f"the Kubernetes API at {host} refused to proxy to {where} ({error}): "
            f"your kubeconfig's user needs `get` on `services/proxy` in {service.namespace}"
        )
    if isinstance(error, UnavailableError) and not isinstance(error.__cause__, ApiException):
        return (
            f"cannot reach the Kubernetes API at {host} ({error}): check your kubeconfig's "
            "current context (kubectl cluster-info)"
        )
    return (
        f"cannot read the controller's status through the Kubernetes API at {host} ({error}): "
        f"is a controller pod ready? (kubectl -n {service.namespace} get pods)"
    )
