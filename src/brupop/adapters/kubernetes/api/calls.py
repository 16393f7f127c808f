"""ApiCalls: one official-client call, with a timeout, read as JSON and translated on failure.

Every call asks the client for the raw answer (`_preload_content=False`) and parses the JSON
itself, so the adapters see exactly what the API sent and never the client's models.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from kubernetes.client import ApiClient

from brupop.adapters.kubernetes.api.errors import translated
from brupop.ports.errors import UnavailableError

JSON = dict[str, Any]
MERGE_PATCH = "application/merge-patch+json"


class ApiCalls:
    """The shared client and timeouts every Kubernetes adapter calls through."""

    def __init__(
        self,
        api_client: ApiClient,
        *,
        request_timeout_seconds: float = 30.0,
        connect_timeout_seconds: float = 5.0,
    ) -> None:
        self.api_client = api_client
        self.request_timeout_seconds = request_timeout_seconds
        self.connect_timeout_seconds = connect_timeout_seconds

    def json(self, action: str, method: Callable[..., Any], *args: Any, **kwargs: Any) -> JSON:
        """Call `method` and return its JSON object answer."""
        return _parse(action, self.body(action, method, *args, **kwargs))

    def body(self, action: str, method: Callable[..., Any], *args: Any, **kwargs: Any) -> bytes:
        """Call `method` and return its answer's body as sent, for a caller that decodes it."""
        timeout = (self.connect_timeout_seconds, self.request_timeout_seconds)
        with translated(action):
            response = method(*args, _preload_content=False, _request_timeout=timeout, **kwargs)
            data: bytes = response.data
        return data

    def stream(
        self,
        action: str,
        method: Callable[..., Any],
        read_timeout: float,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        """Open a streaming answer (a watch); the caller reads it with `lines` and closes it."""
        timeout = (self.connect_timeout_seconds, max(read_timeout, 0.05))
        with translated(action):
            return method(*args, _preload_content=False, _request_timeout=timeout, **kwargs)


def lines(response: Any) -> Iterator[str]:
    """The non-empty lines of a streaming answer, as they arrive."""
    buffer = b""
    for chunk in response.stream(amt=None, decode_content=False):
        buffer += chunk
        *complete, buffer = buffer.split(b"\n")
        for line in complete:
            if line.strip():
                yield line.decode("utf-8", "replace")
    if buffer.strip():
        yield buffer.decode("utf-8", "replace")


@contextmanager
def collection_paused() -> Iterator[None]:
    """No cyclic garbage collection meanwhile (left as found). For a parse: json.loads makes no
    cycles, and a collection mid-parse moves the half-built answer into the older generations,
    whose full collections then walk every object the controller's mirror holds (at 10,000
    Nodes, most of the CPU of a resync by versions)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _parse(action: str, data: bytes) -> JSON:
    try:
        with collection_paused():
            parsed = json.loads(data) if data else {}
    except (ValueError, RecursionError):
        raise UnavailableError(
            f"{action}: the Kubernetes API sent something other than JSON"
        ) from None
    if not isinstance(parsed, dict):
        raise UnavailableError(f"{action}: the Kubernetes API sent JSON that is not an object")
    return parsed
