"""The kube-apiserver's service proxy for the emulator: `GET /api/v1/namespaces/<ns>/services/
<[scheme:]name[:port]>/proxy/<path>` is forwarded to the backend a test declares for that
Service, and answered with the backend's status and body, as the real proxy does.

Answers as kube-apiserver 1.37 gives them (its service REST's ResourceLocation): a port given
by number makes it read the Service first, so a missing Service is a 404 with a `v1 Status`;
a port given by name (or none) goes straight to the endpoints, so a missing Service is a 503
`no endpoints available`, as is a port the Service lacks or a backend that does not answer.
"""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from dataclasses import dataclass

import kmock
from kmock._internal.rendering import Response

from tests.support import kube_api_rules as rules
from tests.support.kube_emulator import KubeEmulator

_JSON_HEADERS = {"Content-Type": "application/json"}


@dataclass(frozen=True)
class ProxiedService:
    """A Service the proxy knows: its one port's name and number, and where its pod listens
    (None: no ready endpoint)."""

    port_name: str
    port: int
    backend: str | None


class ServiceProxy:
    """Registers the proxy route on `emulator`; `add_service` declares what it may reach."""

    def __init__(self, emulator: KubeEmulator) -> None:
        self._services: dict[tuple[str, str], ProxiedService] = {}
        # Above the emulator's resource handler, which would answer "services" with a 404.
        (emulator.fallback**2)[self.is_proxy_request] << self._forward

    def add_service(
        self, namespace: str, name: str, *, port_name: str, port: int, backend: str | None
    ) -> None:
        """Declare Service `namespace/name` whose port `port_name`/`port` reaches `backend`."""
        self._services[namespace, name] = ProxiedService(port_name, port, backend)

    @staticmethod
    def is_proxy_request(request: kmock.Request) -> bool:
        """A request for some Service's proxy subresource (tests may react to it themselves)."""
        resource = request.resource
        return (
            resource is not None
            and resource.plural == "services"
            and (request.subresource or "").split("/")[0] == "proxy"
        )

    async def _forward(self, request: kmock.Request) -> Response:
        scheme, name, port = _split(request.name or "")
        service = self._services.get((request.namespace or "", name))
        if service is None and port.isdigit():
            return _status(404, "NotFound", f'services "{name}" not found')
        if service is None or scheme not in ("", "http"):
            return _status(
                503, "ServiceUnavailable", f'no endpoints available for service "{name}"'
            )
        if port not in ("", service.port_name, str(service.port)):
            return _status(
                503, "ServiceUnavailable", f'no endpoints available for service "{name}"'
            )
        if service.backend is None:
            return _status(
                503, "ServiceUnavailable", f'no endpoints available for service "{name}"'
            )
        path = (request.subresource or "").removeprefix("proxy")
        target = service.backend.rstrip("/") + (path or "/")
        if request.url.query_string:
            target += f"?{request.url.query_string}"
        return await asyncio.to_thread(_get, target)


def _split(proxy_name: str) -> tuple[str, str, str]:
    """`[scheme:]name[:port]` as the kube-apiserver splits it."""
    parts = proxy_name.split(":")
    if len(parts) == 3:
        return parts[0], parts[1], parts[2]
    if len(parts) == 2:
        return "", parts[0], parts[1]
    return "", proxy_name, ""


def _get(url: str) -> Response:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return _relayed(answer.status, answer.read(), answer.headers.get("Content-Type"))
    except urllib.error.HTTPError as error:
        return _relayed(error.code, error.read(), error.headers.get("Content-Type"))
    except OSError as error:
        return _status(503, "ServiceUnavailable", f"error trying to reach service: {error}")


def _relayed(code: int, body: bytes, content_type: str | None) -> Response:
    headers = {"Content-Type": content_type} if content_type else {}
    return Response(status=code, payload=body, headers=headers)


def _status(code: int, reason: str, message: str) -> Response:
    return Response(
        status=code, payload=rules.status_body(code, reason, message), headers=_JSON_HEADERS
    )
