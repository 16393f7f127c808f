"""The agent's wire protocol to the brupop apiserver, over asyncio streams with real TLS: one
keep-alive HTTP/1.1 connection, the agent's headers (node name, node UID, pod token)."""

from __future__ import annotations

import asyncio
import json
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

RESOURCE = "/bottlerocket-node-resource"


class ProtocolError(RuntimeError):
    """The apiserver answered something this client cannot read."""


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any


class AgentConnection:
    """One agent's connection to one apiserver replica."""

    def __init__(
        self,
        host: str,
        port: int,
        context: ssl.SSLContext | None,
        node: str,
        token: str,
        source: str | None = None,
    ):
        self._address = (host, port)
        # In a cluster every agent calls from its own pod address, and the apiserver's
        # per-address limits are made for that: one loopback address per agent here too.
        self._source = (source, 0) if source else None
        self._context = context
        self._node = node
        self._token = token
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self.node_uid: str | None = None

    async def call(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, str] | None = None,
        body: Any = None,
        seconds: float = 30.0,
    ) -> Answer:
        request = self._request(method, path, query, body)
        reused = self._reusable()
        try:
            return await self._send(request, seconds)
        except (asyncio.IncompleteReadError, ConnectionError):
            if not reused:
                raise
        # The server closed the kept-alive connection as the request went out (its idle
        # timeout): a fresh connection, once, as the agent's client does.
        return await self._send(request, seconds)

    def _reusable(self) -> bool:
        """Whether a kept-alive connection is open; one the server closed is dropped (the
        agent's client polls its idle connections the same way before reusing one)."""
        if self._streams is None:
            return False
        reader, writer = self._streams
        if reader.at_eof() or writer.is_closing():
            self.close()
            return False
        return True

    async def _send(self, request: bytes, seconds: float) -> Answer:
        if self._streams is None:
            host, port = self._address
            self._streams = await asyncio.open_connection(
                host, port, ssl=self._context, local_addr=self._source
            )
        reader, writer = self._streams
        writer.write(request)
        try:
            return await asyncio.wait_for(read_answer(reader), seconds)
        except BaseException:
            self.close()
            raise

    def _request(self, method: str, path: str, query: dict[str, str] | None, body: Any) -> bytes:
        target = f"{path}?{urlencode(query)}" if query else path
        payload = json.dumps(body).encode() if body is not None else b""
        lines = [
            f"{method} {target} HTTP/1.1",
            f"Host: {self._address[0]}:{self._address[1]}",
            f"BrupopNodeName: {self._node}",
            f"BrupopK8sAuthToken: {self._token}",
            f"Content-Length: {len(payload)}",
        ]
        if self.node_uid is not None:
            lines.append(f"BrupopNodeUid: {self.node_uid}")
        if body is not None:
            lines.append("Content-Type: application/json")
        return ("\r\n".join(lines) + "\r\n\r\n").encode() + payload

    def close(self) -> None:
        if self._streams is not None:
            self._streams[1].close()
            self._streams = None


def parse_head(head: bytes) -> tuple[int, int]:
    """The status code and Content-Length of an HTTP/1.1 response head."""
    lines = head.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split(" ", 2)[1])
    except (IndexError, ValueError):
        raise ProtocolError(f"not an HTTP status line: {lines[0][:80]!r}") from None
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name == "content-length":
            length = int(value)
        elif name == "transfer-encoding":
            raise ProtocolError("chunked answers are not read by this client")
    return status, length


async def read_answer(reader: asyncio.StreamReader) -> Answer:
    status, length = parse_head(await reader.readuntil(b"\r\n\r\n"))
    raw = await reader.readexactly(length) if length else b""
    try:
        return Answer(status, json.loads(raw) if raw else None)
    except ValueError:
        return Answer(status, None)
