"""The attacks of apiserver_abuse.py, one per run: `abuse_attacks.py NAME --ready FILE --seconds S`.

Each talks to the loopback apiserver named in `ready.json`, is bounded in connections, requests
and time (it stops by itself after `--seconds`), and prints one JSON object: what it got back.
"""

from __future__ import annotations

import argparse
import http.client
import json
import selectors
import socket
import ssl
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from abuse_agents import AGENT_ATTACKS
from abuse_budgets import BUDGET_ATTACKS
from abuse_conversion import CONVERSION_ATTACKS

HOST = "127.0.0.1"
CHUNK = b"X-Filler: " + b"a" * 65_000 + b"\r\n"


class Target:
    """The apiserver under attack."""

    def __init__(self, ready: dict[str, Any], seconds: float, work: Path) -> None:
        self.port: int = ready["port"]
        self.webhook_port: int | None = ready.get("webhook_port")
        self.nodes: list[dict[str, str]] = ready["nodes"]
        self.gone_nodes: list[dict[str, str]] = ready.get("gone_nodes", [])
        self.work = work  # the server's work directory (its cluster's call counts)
        self.context = ssl.create_default_context(cafile=ready["ca"])
        self.until = time.monotonic() + seconds

    def left(self) -> float:
        return self.until - time.monotonic()

    def tcp(self) -> socket.socket:
        return socket.create_connection((HOST, self.port), timeout=5)

    def tls(self) -> ssl.SSLSocket:
        return self.context.wrap_socket(self.tcp(), server_hostname=HOST)

    def https(self) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection(HOST, self.port, context=self.context, timeout=30)


def answer_of(connection: socket.socket, wait: float = 5.0) -> str:
    """The status code the server sent, "closed" if it hung up without one, "open" if neither."""
    connection.settimeout(wait)
    try:
        data = connection.recv(64)
    except (TimeoutError, BlockingIOError):
        return "open"
    except (OSError, ssl.SSLError):
        return "closed"
    if data.startswith(b"HTTP/1.1 "):
        return data[9:12].decode()
    return "closed" if not data else "other"


def big_headers(target: Target, clients: int = 3, rounds: int = 20) -> dict[str, Any]:
    """`clients` clients at once, each sending requests with up to 64 MB of headers and no
    token, one after the other (at most `rounds` each)."""
    results: list[dict[str, Any]] = []

    def one() -> None:
        for _ in range(rounds):
            if target.left() <= 0:
                return
            results.append(_one_big_head(target))

    run_threads(clients, one)
    return {
        "clients": clients,
        "requests": len(results),
        "answers": dict(Counter(r["answer"] for r in results)),
        "most_header_bytes_sent": max((r["header_bytes_sent"] for r in results), default=0),
    }


def _one_big_head(target: Target) -> dict[str, Any]:
    sent = 0
    try:
        connection = target.tls()
    except OSError as error:
        return {"answer": f"connect: {type(error).__name__}", "header_bytes_sent": 0}
    with connection:
        try:
            connection.sendall(b"GET /ping HTTP/1.1\r\nHost: x\r\n")
            while sent < 64 * 1024 * 1024 and target.left() > 0:
                connection.sendall(CHUNK)
                sent += len(CHUNK)
            connection.sendall(b"\r\n")
        except OSError:
            pass
        return {"answer": answer_of(connection), "header_bytes_sent": sent}


def slow_loris(target: Target, count: int = 500) -> dict[str, Any]:
    """`count` TLS connections, each sending its request head one byte a second."""
    head = b"GET /ping HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + b"a" * 1000
    opened: dict[ssl.SSLSocket, float] = {}
    refused = 0
    for _ in range(count):
        if target.left() <= 0:
            break
        try:
            opened[target.tls()] = time.monotonic()
        except OSError:
            refused += 1
    return _trickle(target, opened, head, refused)


def _trickle(
    target: Target, opened: dict[ssl.SSLSocket, float], head: bytes, refused: int
) -> dict[str, Any]:
    answers: Counter[str] = Counter()
    lived: list[float] = []
    position = 0
    while opened and target.left() > 0 and position < len(head):
        for connection in list(opened):
            answer = _sent_or_answer(connection, head[position : position + 1])
            if answer is not None:
                answers[answer] += 1
                lived.append(time.monotonic() - opened.pop(connection))
                connection.close()
        position += 1
        time.sleep(max(0.0, min(1.0, target.left())))
    still_open = len(opened)
    for connection in opened:
        connection.close()
    return {
        "connections": len(lived) + still_open,
        "refused_at_connect": refused,
        "closed_by_server": len(lived),
        "still_open_at_end": still_open,
        "answers": dict(answers),
        "longest_seconds_open_before_close": round(max(lived), 1) if lived else None,
    }


def _sent_or_answer(connection: ssl.SSLSocket, byte: bytes) -> str | None:
    """Send one byte; None while the server keeps listening, else what it answered."""
    connection.settimeout(0.0)
    try:
        data = connection.recv(64)
    except (ssl.SSLWantReadError, BlockingIOError):
        try:
            connection.send(byte)
        except (ssl.SSLWantWriteError, BlockingIOError):
            return None
        except OSError:
            return "closed"
        return None
    except OSError:
        return "closed"
    if data.startswith(b"HTTP/1.1 "):
        return data[9:12].decode()
    return "closed" if not data else "other"


def silent_tcp(target: Target, count: int = 1000) -> dict[str, Any]:
    """`count` TCP connections that never start TLS."""
    opened: dict[socket.socket, float] = {}
    refused = 0
    for _ in range(count):
        if target.left() <= 0:
            break
        try:
            opened[target.tcp()] = time.monotonic()
        except OSError:
            refused += 1
    lived: list[float] = []
    with selectors.DefaultSelector() as selector:
        for connection in opened:
            selector.register(connection, selectors.EVENT_READ)
        while opened and target.left() > 0:
            for key, _ in selector.select(min(0.5, max(0.0, target.left()))):
                connection = key.fileobj
                assert isinstance(connection, socket.socket)
                selector.unregister(connection)
                lived.append(time.monotonic() - opened.pop(connection))
                connection.close()
    for connection in opened:
        connection.close()
    return {
        "connections": len(lived) + len(opened),
        "refused_at_connect": refused,
        "closed_by_server": len(lived),
        "still_open_at_end": len(opened),
        "longest_seconds_open_before_close": round(max(lived), 1) if lived else None,
    }


def bogus_tokens(target: Target, clients: int = 20, most: int = 2000) -> dict[str, Any]:
    """`clients` clients sending agent requests with one bogus token, at most `most` in all."""
    statuses: Counter[str] = Counter()
    headers = {"BrupopNodeName": "node-00000", "BrupopNodeUid": "x", "BrupopK8sAuthToken": "bogus"}

    def one() -> None:
        connection = target.https()
        while target.left() > 0 and sum(statuses.values()) < most:
            statuses[get(connection, "/bottlerocket-node-resource", headers)] += 1

    run_threads(clients, one)
    return {"clients": clients, "requests": sum(statuses.values()), "statuses": dict(statuses)}


def cut_short(target: Target, count: int = 1000) -> dict[str, Any]:
    """`count` malformed requests and `count` bodies cut short (the client hangs up)."""
    answers: Counter[str] = Counter()
    for index in range(count):
        if target.left() <= 0:
            break
        with target.tls() as connection:
            if index % 2:
                connection.sendall(b"NOT HTTP AT ALL\r\n\r\n")
                answers["malformed: " + answer_of(connection)] += 1
            else:
                connection.sendall(
                    b"POST /crdconvert HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{"
                )
                answers["cut short: client hung up"] += 1
    return {"answers": dict(answers)}


def refused_versions(target: Target, clients: int = 6, most: int = 3000) -> dict[str, Any]:
    """Authorized agents (nodes 1 to `clients`; the probe is node 0) that first report 1.0.0,
    then a new version no host offered on every request (9.9.0, 9.9.1, ...): each is refused
    with a 422 and a reason, and what is stored stays 1.0.0."""
    statuses: Counter[str] = Counter()
    counter = iter(range(most))
    agents = [_agent_headers(node) for node in target.nodes[1 : clients + 1]]

    def one(headers: dict[str, str]) -> None:
        connection = target.https()
        first = _status_body("1.0.0")
        statuses["first: " + _request(connection, "PUT", RESOURCE, first, headers)] += 1
        while target.left() > 0 and (index := next(counter, None)) is not None:
            body = _status_body(f"9.9.{index}")
            statuses[_request(connection, "PUT", RESOURCE, body, headers)] += 1

    threads = [threading.Thread(target=one, args=(h,), daemon=True) for h in agents]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stored = {_stored_version(target, headers) for headers in agents}
    return {"clients": len(agents), "statuses": dict(statuses), "stored_versions": sorted(stored)}


def deep_json(target: Target, clients: int = 4, depth: int = 30_000) -> dict[str, Any]:
    """Bodies nested `depth` deep (past any parser's recursion limit): status reports of
    authorized agents (under the 64 KiB body limit) and ConversionReviews (no token), in turn;
    each must be refused (400), never a 500."""
    nested = b"[" * depth + b"]" * depth
    status = b'{"current_version": ' + nested + b"}"
    review = b'{"kind": "ConversionReview", "request": {"uid": "x", "objects": ' + nested + b"}}"
    statuses: Counter[str] = Counter()
    agents = [_agent_headers(node) for node in target.nodes[1 : clients + 1]]

    def one(headers: dict[str, str]) -> None:
        connection = target.https()
        while target.left() > 0:
            statuses["status: " + _request(connection, "PUT", RESOURCE, status, headers)] += 1
            statuses["crdconvert: " + post(connection, "/crdconvert", review, {})] += 1

    threads = [threading.Thread(target=one, args=(h,), daemon=True) for h in agents]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"clients": len(agents), "depth": depth, "statuses": dict(statuses)}


RESOURCE = "/bottlerocket-node-resource"


def _agent_headers(node: dict[str, str]) -> dict[str, str]:
    return {
        "BrupopNodeName": node["name"],
        "BrupopNodeUid": node["uid"],
        "BrupopK8sAuthToken": node["token"],
        "Content-Type": "application/json",
    }


def _status_body(version: str) -> bytes:
    status = {
        "current_version": version,
        "target_version": "1.1.0",
        "current_state": "Idle",
        "crash_count": 0,
    }
    return json.dumps(status).encode()


def _stored_version(target: Target, headers: dict[str, str]) -> str:
    """The current_version the node's shadow holds now."""
    connection = target.https()
    try:
        connection.request("GET", RESOURCE, headers=headers)
        shadow = json.loads(connection.getresponse().read())
        return str((shadow.get("status") or {}).get("current_version"))
    except (OSError, ValueError, http.client.HTTPException) as error:
        return type(error).__name__
    finally:
        connection.close()


def post(
    connection: http.client.HTTPSConnection, path: str, body: bytes, headers: dict[str, str]
) -> str:
    return _request(connection, "POST", path, body, headers)


def get(connection: http.client.HTTPSConnection, path: str, headers: dict[str, str]) -> str:
    return _request(connection, "GET", path, None, headers)


def _request(
    connection: http.client.HTTPSConnection,
    method: str,
    path: str,
    body: bytes | None,
    headers: dict[str, str],
) -> str:
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        return str(response.status)
    except (OSError, http.client.HTTPException) as error:
        connection.close()
        return type(error).__name__


def run_threads(count: int, work: Callable[[], None]) -> None:
    threads = [threading.Thread(target=work, daemon=True) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


ATTACKS: dict[str, Callable[[Target], dict[str, Any]]] = {
    "big_headers": big_headers,
    "slow_loris": slow_loris,
    "silent_tcp": silent_tcp,
    **CONVERSION_ATTACKS,
    "bogus_tokens": bogus_tokens,
    "malformed_and_cut_short": cut_short,
    "refused_versions": refused_versions,
    "deep_json": deep_json,
    **BUDGET_ATTACKS,
    **AGENT_ATTACKS,
}


def main() -> int:
    parser = argparse.ArgumentParser(description="run one attack against a loopback apiserver")
    parser.add_argument("attack", choices=sorted(ATTACKS))
    parser.add_argument("--ready", type=Path, required=True)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    ready = json.loads(args.ready.read_text())
    target = Target(ready, min(args.seconds, 60.0), args.ready.parent)
    started = time.monotonic()
    result = ATTACKS[args.attack](target)
    result["seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
