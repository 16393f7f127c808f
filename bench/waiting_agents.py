"""Simulated waiting agents for apiserver_waiting.py: one process holding many agents' long-polls.

Each agent opens one keep-alive HTTPS connection and sends the real agent's long-poll
(`GET /bottlerocket-node-resource?timeoutSeconds=30&resourceVersion=V` with its node's name, UID
and token, as adapters/apiserver_client sends it), asking again as soon as it is answered, with
the resourceVersion it was answered, from a loopback address of its own. A failed poll is retried
as the real agent retries it (`Retrying`), on a new connection after a connection error. The
agents connect at `--connect-rate` a second, so that the handshakes do not all land at once. Once
every agent has sent its first wait (or CONNECT_SECONDS passed) the process prints `waiting`;
when stdin closes it prints one JSON object: every answer each agent got (resourceVersion,
time.monotonic()), the errors, and how many agents never waited.

This process's own TLS reads use 16 KiB buffers instead of asyncio's 256 KiB (memory of the bench,
not of the server).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import ssl
import sys
import time
from asyncio import sslproto
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from http_answers import read_answer

from brupop.adapters.apiserver_client import RetrySchedule

RESOURCE = "/bottlerocket-node-resource"
WAIT_SECONDS = 30  # the agent's SHADOW_WAIT_SECONDS
LOOP_INTERVAL_SECONDS = 5.0  # the agent's AGENT_LOOP_INTERVAL_SECONDS: its wait after trouble
RETRY = RetrySchedule()  # what the agent's ApiserverClient retries with
CONNECT_SECONDS = 300.0  # how long every agent may take to wait, refusals retried, at most


class Agents:
    """What the agents of this process saw."""

    def __init__(self, count: int) -> None:
        self.answers: dict[str, list[tuple[str, float]]] = {}
        self.errors: dict[str, int] = {}
        self.errors_once_waiting = 0  # errors after every agent of this process waited
        self.first_waits = 0
        self._count = count
        self.all_waiting = asyncio.Event()
        self.not_waiting = 0  # agents still without a first wait when the process went on
        self.connect_seconds = 0.0  # from the last connection opened to every agent waiting

    def note_error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1
        if self.all_waiting.is_set():
            self.errors_once_waiting += 1

    def note_first_wait(self) -> None:
        self.first_waits += 1
        if self.first_waits == self._count:
            self.all_waiting.set()


def request(host: str, node: dict[str, str], version: str | None, wait: bool) -> bytes:
    """The agent's long-poll for a change from `version` (`wait`), or its tick's plain read."""
    query = f"?timeoutSeconds={WAIT_SECONDS}" if wait else ""
    if wait and version is not None:
        query += f"&resourceVersion={version}"
    return (
        f"GET {RESOURCE}{query} HTTP/1.1\r\n"
        f"Host: {host}\r\n"
        "User-Agent: brupop-agent\r\n"
        "Accept: application/json\r\n"
        f"BrupopNodeName: {node['name']}\r\n"
        f"BrupopNodeUid: {node['uid']}\r\n"
        f"BrupopK8sAuthToken: {node['token']}\r\n\r\n"
    ).encode()


def source_address(index: int) -> str:
    """A loopback address of its own for agent `index` (all of 127/8 is loopback on Linux), so
    that the apiserver's per-address limits see one agent per address, as in a cluster."""
    return f"127.{1 + index // 62500}.{index // 250 % 250}.{1 + index % 250}"


class Retrying:
    """The real agent's answer to a failed long-poll: the transport's RetrySchedule (full jitter
    below 0.1 s doubled per failure, 5 retries) for connection errors, 429 and 5xx; once those
    are spent, or on any other status, the agent's loop waits LOOP_INTERVAL_SECONDS and its next
    tick reads the shadow (a plain GET) before it long-polls again."""

    def __init__(self) -> None:
        self.failures = 0  # in a row, within the current call
        self.read_first = False  # the next request is the tick's read, not a long-poll

    def succeeded(self) -> None:
        self.failures = 0
        self.read_first = False

    def after_failure(self, retryable: bool) -> float:
        """How long to wait before the next request."""
        if retryable and self.failures < RETRY.retries:
            delay = RETRY.delay(self.failures, random.random)
            self.failures += 1
            return delay
        self.failures = 0
        self.read_first = True
        return LOOP_INTERVAL_SECONDS


class Link:
    """One agent's keep-alive TLS connection from its own address, opened again after an error."""

    def __init__(self, index: int, url: str, context: ssl.SSLContext) -> None:
        parts = urlsplit(url)
        assert parts.hostname is not None and parts.port is not None
        self.authority = parts.netloc
        self._address = (parts.hostname, parts.port)
        self._source = (source_address(index), 0)
        self._context = context
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def ask(self, request: bytes) -> tuple[int, bytes]:
        """Send `request`, connecting first if needed; its answer's status and body. A
        connection the server closed while idle (its keep-alive time-out, 5 s) is opened again
        first, as the agent's client does, not counted an error."""
        if self._streams is not None and self._streams[0].at_eof():
            self.close()
        try:
            if self._streams is None:
                host, port = self._address
                self._streams = await asyncio.open_connection(
                    host, port, ssl=self._context, local_addr=self._source
                )
            reader, writer = self._streams
            writer.write(request)
            return await read_answer(reader)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self._streams is not None:
            self._streams[1].close()
            self._streams = None


async def one_agent(
    index: int, node: dict[str, str], url: str, context: ssl.SSLContext, agents: Agents
) -> None:
    """Long-poll until cancelled, reconnecting and retrying as the real agent does."""
    link = Link(index, url, context)
    answers = agents.answers.setdefault(node["name"], [])
    version: str | None = None
    retrying = Retrying()
    waiting = False  # counted in agents.first_waits
    try:
        while True:
            wait = not retrying.read_first
            if wait and version is not None and not waiting:
                waiting = True
                agents.note_first_wait()
            try:
                status, body = await link.ask(request(link.authority, node, version, wait))
            except (OSError, asyncio.IncompleteReadError, ValueError) as error:
                agents.note_error(type(error).__name__)
                status, body = 0, b""
            at = time.monotonic()
            if status == 200:
                retrying.succeeded()
                version = json.loads(body)["metadata"]["resourceVersion"]
                answers.append((version, at))
                continue
            if status:
                agents.note_error(f"http_{status}: {body[:80].decode(errors='replace')}")
            delay = retrying.after_failure(status in (0, 429) or status >= 500)
            await asyncio.sleep(delay)
    finally:
        link.close()


async def run_agent(
    index: int, node: dict[str, str], url: str, context: ssl.SSLContext, agents: Agents
) -> None:
    try:
        await one_agent(index, node, url, context, agents)
    except (KeyError, json.JSONDecodeError) as error:  # an answer that is not a shadow
        agents.note_error(type(error).__name__)
        if not agents.all_waiting.is_set():
            agents.note_first_wait()  # it will never wait; do not hold the others up


async def drive(args: argparse.Namespace) -> Agents:
    ready = json.loads(Path(args.ready).read_text())
    nodes = ready["nodes"][args.first : args.first + args.count]
    context = ssl.create_default_context(cafile=ready["ca"])
    agents = Agents(len(nodes))
    tasks = []
    for index, node in enumerate(nodes, start=args.first):
        agent = run_agent(index, node, ready["url"], context, agents)
        tasks.append(asyncio.create_task(agent))
        await asyncio.sleep(1.0 / args.connect_rate)
    connecting = time.monotonic()
    with contextlib.suppress(TimeoutError):  # refused over and over: go on, and say how many
        await asyncio.wait_for(agents.all_waiting.wait(), CONNECT_SECONDS)
    agents.not_waiting = len(nodes) - agents.first_waits
    agents.connect_seconds = time.monotonic() - connecting
    print("waiting", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return agents


def main() -> int:
    parser = argparse.ArgumentParser(description="simulated agents holding long-polls")
    parser.add_argument("--ready", required=True, help="the apiserver process's ready.json")
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--connect-rate", type=float, default=400.0)
    args = parser.parse_args()
    sslproto.SSLProtocol.max_size = 16 * 1024
    agents = asyncio.run(drive(args))
    result: dict[str, Any] = {
        "answers": agents.answers,
        "errors": agents.errors,
        "errors_once_waiting": agents.errors_once_waiting,
        "not_waiting": agents.not_waiting,
        "connect_seconds": round(agents.connect_seconds, 1),
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
