"""ApiserverClient: the agent's ShadowStore and NodeOperations, over HTTPS to the brupop apiserver.

The agent knows only its node's name; the node's UID (which the apiserver checks on every other
call) is asked once, lazily, from the authorized `node-uid` route.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping

from brupop.adapters.apiserver_client.transport import HttpsTransport, Reply, RetrySchedule
from brupop.adapters.apiserver_client.wire import shadow_from_document
from brupop.domain.host.agent_shadow import AgentShadow, AgentShadowStatus
from brupop.ports.errors import (
    AlreadyExistsError,
    ConflictError,
    DrainFailedError,
    ForbiddenError,
    InvalidObjectError,
    NotFoundError,
    PortError,
    UnauthorizedError,
    UnavailableError,
)

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from typing import Any, Protocol

    from brupop.ports.agent.node_operations import NodeOperations
    from brupop.ports.agent.shadow_store import ShadowStore

    class ApiserverTransport(Protocol):
        """How the client's calls reach the apiserver (HttpsTransport; tests script answers)."""

        def call(
            self,
            method: str,
            path: str,
            *,
            read_seconds: float,
            node_uid: str | None = None,
            body: Any = None,
            query: Mapping[str, str] | None = None,
        ) -> Reply:
            """One logical call: its answer, or the PortError it ended in."""
            ...

        def close(self) -> None:
            """Close the connections."""
            ...


RESOURCE = "/bottlerocket-node-resource"
SERVICE_NAME = "brupop-apiserver"


def apiserver_base_url(namespace: str, port: int, cluster_domain: str = "cluster.local") -> str:
    """`https://brupop-apiserver.<namespace>.svc.<cluster_domain>:<port>`."""
    return f"https://{SERVICE_NAME}.{namespace}.svc.{cluster_domain}:{port}"


class ApiserverClient:
    """ShadowStore and NodeOperations of one node, through the brupop apiserver."""

    def __init__(
        self,
        *,
        base_url: str,
        node_name: str,
        token_path: str | os.PathLike[str],
        ca_path: str | os.PathLike[str],
        timeout_seconds: float,
        drain_timeout_seconds: float,
        retry: RetrySchedule | None = None,
        transport: ApiserverTransport | None = None,
    ) -> None:
        self._node_name = node_name
        self._timeout = timeout_seconds
        self._drain_timeout = drain_timeout_seconds
        self._http: ApiserverTransport = transport or HttpsTransport(
            base_url=base_url,
            node_name=node_name,
            token_path=token_path,
            ca_path=ca_path,
            retry=retry or RetrySchedule(),
        )
        self._uid: str | None = None
        self._uid_lock = threading.Lock()

    # --- ShadowStore ----------------------------------------------------------------------

    def get(self) -> AgentShadow | None:
        return self._read_shadow(self._call("GET", RESOURCE))

    def wait_for_change(
        self, resource_version: str | None, timeout_seconds: float
    ) -> AgentShadow | None:
        query = {"timeoutSeconds": f"{max(timeout_seconds, 0.0):g}"}
        if resource_version is not None:
            query["resourceVersion"] = resource_version
        reply = self._call(
            "GET", RESOURCE, query=query, read_seconds=timeout_seconds + self._timeout
        )
        return self._read_shadow(reply)

    def create(self) -> AgentShadow:
        reply = self._call("POST", RESOURCE, body={"node_selector": self._selector()})
        if reply.status == 409:
            existing = self.get()
            if existing is None:
                raise AlreadyExistsError(reply.error_message())
            return existing
        return shadow_from_document(_expect_ok(reply).json())

    def update_status(self, status: AgentShadowStatus) -> AgentShadow:
        reply = self._call("PUT", RESOURCE, body=status.to_json(), query={"view": "shadow"})
        return shadow_from_document(_expect_ok(reply).json())

    # --- NodeOperations ---------------------------------------------------------------------

    def cordon_and_drain(self) -> None:
        reply = self._call(
            "POST",
            f"{RESOURCE}/cordon-and-drain",
            read_seconds=self._drain_timeout + self._timeout,
        )
        if reply.status == 409:
            raise DrainFailedError(reply.error_message(), blockers=_blockers(reply))
        _expect_ok(reply)

    def uncordon(self) -> None:
        _expect_ok(self._call("POST", f"{RESOURCE}/uncordon"))

    def exclude_from_load_balancers(self) -> None:
        _expect_ok(self._call("POST", f"{RESOURCE}/exclude-from-lb"))

    def restore_to_load_balancers(self) -> None:
        _expect_ok(self._call("POST", f"{RESOURCE}/remove-exclusion-from-lb"))

    def close(self) -> None:
        """Close the connections to the apiserver (e.g. when the agent stops)."""
        self._http.close()

    # --- internals ----------------------------------------------------------------------------

    def node_uid(self) -> str:
        """This node's UID, asked from the apiserver once."""
        with self._uid_lock:
            if self._uid is None:
                reply = _expect_ok(
                    self._http.call("GET", f"{RESOURCE}/node-uid", read_seconds=self._timeout)
                )
                uid = reply.json().get("node_uid")
                if not isinstance(uid, str) or not uid:
                    raise UnavailableError("the apiserver did not say this node's UID")
                self._uid = uid
            return self._uid

    def _selector(self) -> dict[str, str]:
        return {"node_name": self._node_name, "node_uid": self.node_uid()}

    def _call(
        self,
        method: str,
        path: str,
        *,
        body: object = None,
        query: dict[str, str] | None = None,
        read_seconds: float | None = None,
    ) -> Reply:
        return self._http.call(
            method,
            path,
            node_uid=self.node_uid(),
            body=body,
            query=query,
            read_seconds=read_seconds or self._timeout,
        )

    def _read_shadow(self, reply: Reply) -> AgentShadow | None:
        if reply.status == 404:
            return None
        return shadow_from_document(_expect_ok(reply).json())


def _blockers(reply: Reply) -> tuple[str, ...]:
    """The pods a refused drain names (none when its answer cannot be read)."""
    try:
        blockers = reply.json().get("blockers")
    except UnavailableError:
        return ()
    if not isinstance(blockers, list):
        return ()
    return tuple(b for b in blockers if isinstance(b, str))


def _expect_ok(reply: Reply) -> Reply:
    """The reply if it is a 2xx; the port error its status stands for otherwise."""
    if 200 <= reply.status < 300:
        return reply
    message = f"apiserver answered {reply.status}: {reply.error_message()}"
    error: type[PortError] = {
        400: InvalidObjectError,
        401: UnauthorizedError,
        403: ForbiddenError,
        404: NotFoundError,
        409: ConflictError,
        413: InvalidObjectError,
        422: InvalidObjectError,
    }.get(reply.status, PortError)
    raise error(message)


_: type[ShadowStore] = ApiserverClient
__: type[NodeOperations] = ApiserverClient
