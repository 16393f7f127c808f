"""The attacks on the apiserver's budgets per client (issue 29), for abuse_attacks.py: silent TCP
connections held on the webhook port or the agents' port, from one loopback address or spread
over many, and one agent token holding long-polls on as many connections as it can.

Each holds up to `count` connections with asyncio (one thread), opening a connection again one
second after the server closed it (a silent connection is hung up at the handshake deadline), and
stops by itself when the target's time is up. The attacker's addresses are 127.0.0.2 and up: the
server's own host (127.0.0.1, where the probes run) is not counted per address.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

HOST = "127.0.0.1"
REOPEN_SECONDS = 1.0
# A connection the server ends within this was refused at accept (or at its first request).
AT_ONCE_SECONDS = 0.5
RESOURCE = "/bottlerocket-node-resource"


class Target(Protocol):
    """What abuse_attacks.Target offers these attacks."""

    port: int
    webhook_port: int | None
    nodes: list[dict[str, str]]
    context: ssl.SSLContext

    def left(self) -> float: ...


def attacker(index: int) -> str:
    """The loopback address of attacker `index` (127.0.0.2, 127.0.0.3, ...)."""
    return f"127.0.{(index + 2) // 256}.{(index + 2) % 256}"


class Tally:
    """What the connections of one attack saw: each connection's end, counted by kind."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def ended(self, how: str, lived: float) -> None:
        """A connection ended (or was still open at the end: "held_at_end") after `lived` s."""
        if how in ("closed_by_server", "reset_by_server"):
            how = "hung_up_at_once" if lived < AT_ONCE_SECONDS else "hung_up_later"
        self.counts[how] += 1

    def report(self, **extra: Any) -> dict[str, Any]:
        return {**extra, **dict(sorted(self.counts.items()))}


def silent_flood(
    target: Target, *, webhook: bool, addresses: int, count: int = 4096
) -> dict[str, Any]:
    """`count` TCP connections that never start TLS, spread over `addresses` source addresses,
    to the webhook port or the agents' port; each one closed by the server is opened again."""
    port = target.webhook_port if webhook else target.port
    if port is None:
        return {"skipped": "the server has no webhook port"}
    tally = Tally()

    async def hold(source: str) -> None:
        while target.left() > 0:
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(HOST, port, local_addr=(source, 0)), target.left()
                )
            except (OSError, TimeoutError):
                tally.counts["connect_failed"] += 1
                await asyncio.sleep(REOPEN_SECONDS)
                continue
            opened = time.monotonic()
            how = await _until_closed(reader, target)
            tally.ended(how, time.monotonic() - opened)
            writer.close()
            if how != "held_at_end":
                await asyncio.sleep(REOPEN_SECONDS)

    sources = [attacker(index % addresses) for index in range(count)]
    _run(target, [hold(source) for source in sources], tally)
    return tally.report(port="webhook" if webhook else "agents", addresses=addresses, held=count)


async def _until_closed(reader: asyncio.StreamReader, target: Target) -> str:
    """Waits until the server closes the connection (or the attack's time is up)."""
    try:
        data = await asyncio.wait_for(reader.read(1), max(0.0, target.left()))
    except TimeoutError:
        return "held_at_end"
    except OSError:
        return "reset_by_server"
    return "closed_by_server" if not data else "answered"


def long_polls_one_token(target: Target, count: int = 1024, most: int = 50_000) -> dict[str, Any]:
    """Node 1's agent token (from one address) holding up to `count` long-polls of 60 s at its
    shadow's version, each on its own TLS connection; a wait answered early is asked again at
    once, at most `most` requests in all."""
    node = target.nodes[1]
    headers = (
        f"Host: {HOST}\r\nBrupopNodeName: {node['name']}\r\nBrupopNodeUid: {node['uid']}\r\n"
        f"BrupopK8sAuthToken: {node['token']}\r\n"
    )
    version = _current_version(target, headers)
    request = (
        f"GET {RESOURCE}?resourceVersion={version}&timeoutSeconds=60 HTTP/1.1\r\n{headers}\r\n"
    ).encode()
    tally = Tally()
    statuses: Counter[str] = Counter()
    source = attacker(0)

    async def poll() -> None:
        while target.left() > 0 and sum(statuses.values()) < most:
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(
                        HOST, target.port, ssl=target.context, server_hostname=HOST,
                        local_addr=(source, 0),
                    ),
                    max(0.1, target.left()),
                )  # fmt: skip
            except (OSError, TimeoutError):
                tally.counts["connect_failed"] += 1
                await asyncio.sleep(REOPEN_SECONDS)
                continue
            opened = time.monotonic()
            how = await _ask_again(reader, writer, request, statuses, target, most)
            tally.ended(how, time.monotonic() - opened)
            writer.close()
            if how != "held_at_end":
                await asyncio.sleep(REOPEN_SECONDS)

    _run(target, [poll() for _ in range(count)], tally)
    return tally.report(
        address=source, long_polls=count, statuses=dict(statuses), requests=sum(statuses.values())
    )


async def _ask_again(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    request: bytes,
    statuses: Counter[str],
    target: Target,
    most: int,
) -> str:
    """Long-poll on one connection until the server closes it or the time is up."""
    while target.left() > 0 and sum(statuses.values()) < most:
        try:
            writer.write(request)
            status = await asyncio.wait_for(_read_answer(reader), max(0.0, target.left()))
        except TimeoutError:
            return "held_at_end"
        except (OSError, ValueError, asyncio.IncompleteReadError):
            return "closed_by_server"
        statuses[status] += 1
    return "held_at_end"


async def _read_answer(reader: asyncio.StreamReader) -> str:
    """The status of one HTTP answer, its body read (IncompleteReadError: the server closed)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next(
        (int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length")),
        0,
    )
    await reader.readexactly(length)
    return lines[0][9:12]


def _current_version(target: Target, headers: str) -> str:
    """The resourceVersion of node 1's shadow now (one plain GET)."""

    async def read() -> str:
        reader, writer = await asyncio.open_connection(
            HOST, target.port, ssl=target.context, server_hostname=HOST
        )
        writer.write(f"GET {RESOURCE} HTTP/1.1\r\n{headers}\r\n".encode())
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        body = json.loads(await reader.readexactly(length))
        writer.close()
        return str(body["metadata"]["resourceVersion"])

    return asyncio.run(read())


def _run(target: Target, work: list[Coroutine[Any, Any, None]], tally: Tally) -> None:
    """Run `work` until it ends or the time is up (plus a second to close up); what failed
    unexpectedly is counted in `tally` by its type."""

    async def main() -> None:
        tasks = [asyncio.ensure_future(one) for one in work]
        await asyncio.wait(tasks, timeout=max(0.0, target.left()) + 1.0)
        for task in tasks:
            task.cancel()
        for outcome in await asyncio.gather(*tasks, return_exceptions=True):
            if isinstance(outcome, Exception):
                tally.counts[f"error: {type(outcome).__name__}: {outcome}"[:120]] += 1

    asyncio.run(main())


BUDGET_ATTACKS: dict[str, Callable[[Any], dict[str, Any]]] = {
    # The finding: silent connections on the webhook port, which the chart opens to any source.
    "silent_webhook_one_address": lambda t: silent_flood(t, webhook=True, addresses=1),
    # The same from 64 addresses (64 connections each): what a cap per address cannot stop.
    "silent_webhook_64_addresses": lambda t: silent_flood(t, webhook=True, addresses=64),
    "silent_agents_port_one_address": lambda t: silent_flood(t, webhook=False, addresses=1),
    "long_polls_one_token": long_polls_one_token,
}
