"""The load generator: many simulated agents in one asyncio process, each speaking the agent's
real protocol to one of the apiserver replicas (round robin by node).

Each agent asks its node's UID once, reports its status, then long-polls its shadow with the
agent's wait (`timeoutSeconds=30` and its last resourceVersion) forever. It notes the wall time
it first sees each new spec state. After the rollout file appears in the control folder it
reports an update available, and acts on each spec state as the agent does: host work (a
sleep), cordon-and-drain before the reboot (a reconnect, as a restarted agent), uncordon after
it, a status PUT after each step. The process stops when the stop file appears and writes its
tallies (requests per wall second by kind, the spec states seen, the errors) as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import ssl
import sys
import time
from asyncio import sslproto
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: bench/ first

from real_cluster.agent_protocol import RESOURCE, AgentConnection, Answer
from real_cluster.fleet import load_fleet

OLD, NEW = "1.0.0", "1.1.0"
WAIT_SECONDS = 30.0
CALL_SECONDS = 30.0
NEXT_STATUS = {  # spec state -> (version after the step, whether it is the reboot)
    "StagedAndPerformedUpdate": (OLD, False),
    "RebootedIntoUpdate": (NEW, True),
    "MonitoringUpdate": (NEW, False),
    "Idle": (NEW, False),
}


class Tally:
    """What every agent of this process did."""

    def __init__(self) -> None:
        self.per_second: dict[int, Counter[str]] = defaultdict(Counter)
        self.answered_2xx: dict[int, Counter[str]] = defaultdict(Counter)  # by answer's second
        self.seen: list[tuple[str, str, str, float]] = []  # node, state, rv, wall time
        self.errors: Counter[str] = Counter()
        self.ready = 0

    def count(self, kind: str) -> None:
        self.per_second[int(time.time())][kind] += 1


class Control:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def rollout(self) -> bool:
        return (self.folder / "rollout").exists()

    def stopping(self) -> bool:
        return (self.folder / "stop").exists()


async def call(conn: AgentConnection, tally: Tally, kind: str, method: str, path: str,
               **kwargs: Any) -> Answer:  # fmt: skip
    tally.count(kind)
    answer = await conn.call(method, path, **kwargs)
    if answer.status >= 300:
        tally.errors[f"{kind}_{answer.status}"] += 1
    else:
        tally.answered_2xx[int(time.time())][kind] += 1
    return answer


def retry_pause(attempt: int, draw: Callable[[], float] = random.random) -> float:
    """The agent client's pause before retry `attempt` (0 on): full jitter, uniform in
    [0, min(10 s, 0.1 s * 2**attempt)), as adapters/apiserver_client's RetrySchedule draws it.
    A fixed pause would send every refused agent back in the same instant, a herd no real
    fleet makes."""
    return draw() * min(10.0, 0.1 * 2.0 ** min(attempt, 16))


async def until_done(conn: AgentConnection, tally: Tally, kind: str, method: str, path: str,
                     **kwargs: Any) -> Answer:  # fmt: skip
    """A call repeated (after the agent's client's jittered pause) until answered 2xx: a
    429, a 5xx or a dropped connection is the cluster busy for a moment, never the end."""
    attempt = 0
    while True:
        try:
            answer = await call(conn, tally, kind, method, path, **kwargs)
        except (OSError, asyncio.IncompleteReadError, TimeoutError) as error:
            tally.errors[f"{kind}_{type(error).__name__}"] += 1
        else:
            if answer.status < 300:
                return answer
        await asyncio.sleep(retry_pause(attempt))
        attempt += 1


async def put_status(conn: AgentConnection, tally: Tally, status: dict[str, Any]) -> Answer:
    return await until_done(conn, tally, "put_status", "PUT", RESOURCE, query={"view": "shadow"},
                            body=status)  # fmt: skip


async def introduce(conn: AgentConnection, tally: Tally) -> None:
    """The node's UID, asked again until answered."""
    answer = await until_done(conn, tally, "get_node_uid", "GET", f"{RESOURCE}/node-uid")
    conn.node_uid = (answer.body or {}).get("node_uid")


def agent_address(index: int) -> str:
    """A loopback address of its own for the agent of fleet index `index` (127.10.0.1 on)."""
    return f"127.{10 + index // 62500}.{index // 250 % 250}.{index % 250 + 1}"


async def one_agent(node: Any, url: str, ctx: ssl.SSLContext, tally: Tally, control: Control,
                    host_seconds: float, start: asyncio.Semaphore,
                    source: str | None = None) -> None:  # fmt: skip
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None

    def connect() -> AgentConnection:
        return AgentConnection(
            parts.hostname or "", parts.port or 0, ctx, node.name, node.token, source
        )

    # One connection, as the agent's client reuses its one idle connection for calls it makes
    # one after another (the agent waits, then acts, then waits again).
    conn = connect()
    status = {"current_version": OLD, "target_version": OLD, "current_state": "Idle",
              "crash_count": 0}  # fmt: skip
    async with start:  # a bounded number of TLS handshakes and first reports at a time
        await introduce(conn, tally)
        answer = await put_status(conn, tally, status)
    version = ((answer.body or {}).get("metadata") or {}).get("resourceVersion")
    tally.ready += 1
    last_state, announced = "Idle", False
    refused = 0  # long-polls refused in a row: the retry pause grows as the agent's does
    while not control.stopping():
        if control.rollout() and not announced:
            status["target_version"] = NEW
            await put_status(conn, tally, status)
            announced = True
        query = {"timeoutSeconds": f"{WAIT_SECONDS:g}"}
        if version:
            query["resourceVersion"] = version
        try:
            answer = await call(conn, tally, "long_poll", "GET", RESOURCE, query=query,
                                seconds=WAIT_SECONDS + CALL_SECONDS)  # fmt: skip
        except (OSError, asyncio.IncompleteReadError, TimeoutError) as error:
            tally.errors[f"long_poll_{type(error).__name__}"] += 1
            await asyncio.sleep(retry_pause(refused))
            refused += 1
            continue
        if answer.status != 200:
            await asyncio.sleep(retry_pause(refused))  # never a tight loop
            refused += 1
            continue
        refused = 0
        shadow = answer.body or {}
        version = (shadow.get("metadata") or {}).get("resourceVersion", version)
        state = (shadow.get("spec") or {}).get("state", "Idle")
        if state != last_state:
            tally.seen.append((node.name, state, str(version), time.time()))
            last_state = state
        if announced and state != status["current_state"] and state in NEXT_STATUS:
            conn = await act(state, status, conn, connect, tally, host_seconds)


async def act(state: str, status: dict[str, Any], conn: AgentConnection,
              connect: Any, tally: Tally, host_seconds: float) -> AgentConnection:  # fmt: skip
    """One step of the update as the agent takes it; the connection to use next."""
    version, reboot = NEXT_STATUS[state]
    if state == "StagedAndPerformedUpdate":
        await asyncio.sleep(host_seconds)  # refresh and prepare
    elif reboot:
        await until_done(conn, tally, "cordon_and_drain", "POST",
                         f"{RESOURCE}/cordon-and-drain", seconds=300.0)  # fmt: skip
        await asyncio.sleep(host_seconds)  # activate and reboot
        conn.close()
        uid, conn = conn.node_uid, connect()
        conn.node_uid = uid
    elif state == "MonitoringUpdate":
        await until_done(conn, tally, "uncordon", "POST", f"{RESOURCE}/uncordon")
    status.update(current_state=state, current_version=version)
    if state == "Idle":
        status["target_version"] = NEW
    await put_status(conn, tally, status)
    return conn


async def drive(args: argparse.Namespace) -> Tally:
    nodes = load_fleet(Path(args.fleet))[args.first : args.first + args.count]
    urls = args.urls.split(",")
    ctx = ssl.create_default_context(cafile=args.ca)
    tally, control = Tally(), Control(Path(args.control))
    start = asyncio.Semaphore(args.connect_concurrency)
    agents = [
        asyncio.create_task(
            one_agent(
                node,
                urls[(args.first + i) % len(urls)],
                ctx,
                tally,
                control,
                args.host_seconds,
                start,
                agent_address(args.first + i),
            )
        )
        for i, node in enumerate(nodes)
    ]
    reporter = asyncio.create_task(report_ready(tally, control, args.first))
    stopper = asyncio.create_task(stop_when_told(control, agents))
    for outcome in await asyncio.gather(*agents, return_exceptions=True):
        if isinstance(outcome, BaseException) and not isinstance(outcome, asyncio.CancelledError):
            tally.errors[f"agent_{type(outcome).__name__}"] += 1
    reporter.cancel()
    stopper.cancel()
    return tally


async def stop_when_told(control: Control, agents: list[asyncio.Task[None]]) -> None:
    while not control.stopping():
        await asyncio.sleep(0.5)
    for agent in agents:
        agent.cancel()


async def report_ready(tally: Tally, control: Control, first: int) -> None:
    """Write how many agents are polling, each second, for the rig to wait on; and the errors
    so far beside it, to read while a run is under way."""
    path = control.folder / f"ready-{first}"
    errors = control.folder / f"errors-{first}.json"
    while True:
        path.write_text(str(tally.ready))
        errors.write_text(json.dumps(dict(tally.errors)))
        await asyncio.sleep(1.0)


def main() -> int:
    parser = argparse.ArgumentParser(description="simulated brupop agents")
    parser.add_argument("--fleet", required=True, help="fleet.json: name, uid, token per node")
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--urls", required=True, help="the apiserver replicas, comma-separated")
    parser.add_argument("--ca", required=True)
    parser.add_argument("--control", required=True, help="folder of the rollout/stop files")
    parser.add_argument("--out", required=True)
    parser.add_argument("--host-seconds", type=float, default=3.0)
    parser.add_argument("--connect-concurrency", type=int, default=64)
    args = parser.parse_args()
    # asyncio gives each TLS connection a 256 KiB read buffer: 2,500 agents would hold 640 MiB
    # for nothing (an answer is a few KiB). A TLS record is at most 16 KiB.
    sslproto.SSLProtocol.max_size = 16 * 1024
    tally = asyncio.run(drive(args))
    result = {
        "agents": args.count,
        "per_second": {str(k): dict(v) for k, v in sorted(tally.per_second.items())},
        "answered_2xx": {str(k): dict(v) for k, v in sorted(tally.answered_2xx.items())},
        "seen": tally.seen,
        "errors": dict(tally.errors),
    }
    Path(args.out).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
