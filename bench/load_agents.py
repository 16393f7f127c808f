"""Simulated agents for apiserver_throughput.py: one process driving many agents' status updates.

Each simulated agent holds one keep-alive HTTPS connection and sends the real agent's status
update (`PUT /bottlerocket-node-resource?view=shadow` with its node's name, UID and token), one
request in flight at a time. Without `--rate` each agent sends again as soon as the answer
arrives (a closed loop: the most the server can answer). With `--rate` the agents send on a
schedule that adds up to that many requests per second, each agent at its own phase; a request
is timed from its scheduled moment, so one that waits for a slow previous answer counts that
wait too. Requests scheduled inside the measured window are timed; the process prints one JSON
object with the latencies, the errors, and its own CPU time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import ssl
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from http_answers import read_answer

PATH = "/bottlerocket-node-resource?view=shadow"
STATUS = {
    "current_version": "1.0.0",
    "target_version": "1.1.0",
    "current_state": "Idle",
    "crash_count": 0,
}


@dataclass
class Tally:
    """What all the agents of this process measured."""

    window_start: float
    window_end: float
    latencies: list[float] = field(default_factory=list)
    outside_window: int = 0
    errors: dict[str, int] = field(default_factory=dict)

    def note_error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1


def request_bytes(host: str, node: dict[str, str]) -> bytes:
    body = json.dumps(STATUS).encode()
    head = (
        f"PUT {PATH} HTTP/1.1\r\n"
        f"Host: {host}\r\n"
        f"BrupopNodeName: {node['name']}\r\n"
        f"BrupopNodeUid: {node['uid']}\r\n"
        f"BrupopK8sAuthToken: {node['token']}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def one_agent(
    node: dict[str, str],
    url: str,
    context: ssl.SSLContext,
    tally: Tally,
    ready: asyncio.Event,
    interval: float | None,
) -> None:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port, ssl=context)
    request = request_bytes(parts.netloc, node)
    await ready.wait()
    due = time.perf_counter() + (random.uniform(0, interval) if interval else 0.0)
    try:
        while due < tally.window_end:
            if interval is not None:
                await asyncio.sleep(max(0.0, due - time.perf_counter()))
            else:
                due = time.perf_counter()
            writer.write(request)
            status, _ = await read_answer(reader)
            ended = time.perf_counter()
            if status != 200:
                tally.note_error(f"http_{status}")
            elif tally.window_start <= due and ended <= tally.window_end:
                tally.latencies.append(ended - due)
            else:
                tally.outside_window += 1
            if interval is not None:
                due += interval
            else:
                due = ended
    finally:
        writer.close()


async def drive(args: argparse.Namespace) -> Tally:
    ready_file = json.loads(Path(args.ready).read_text())
    nodes = ready_file["nodes"][args.first : args.first + args.count]
    context = ssl.create_default_context(cafile=ready_file["ca"])
    go = asyncio.Event()
    # Both clocks: the parent gives the start as wall time; windows are on perf_counter.
    start_in = args.start_at - time.time()
    base = time.perf_counter() + start_in
    tally = Tally(window_start=base + args.warmup, window_end=base + args.warmup + args.duration)
    interval = len(nodes) / args.rate if args.rate else None
    agents = [
        asyncio.create_task(one_agent(node, ready_file["url"], context, tally, go, interval))
        for node in nodes
    ]
    await asyncio.sleep(max(0.0, base - time.perf_counter()))
    go.set()
    for outcome in await asyncio.gather(*agents, return_exceptions=True):
        if isinstance(outcome, BaseException):
            tally.note_error(type(outcome).__name__)
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description="simulated agents sending status updates")
    parser.add_argument("--ready", required=True, help="the apiserver process's ready.json")
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--start-at", type=float, required=True, help="wall-clock start")
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--duration", type=float, default=30.0)
    parser.add_argument("--rate", type=float, default=None, help="requests/s of this process")
    args = parser.parse_args()
    tally = asyncio.run(drive(args))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    result: dict[str, Any] = {
        "agents": args.count,
        "latencies": tally.latencies,
        "outside_window": tally.outside_window,
        "errors": tally.errors,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
