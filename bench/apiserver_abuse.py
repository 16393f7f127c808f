"""Benchmark 5, the apiserver under abuse: the real `brupop apiserver` process (over a fake
cluster whose TokenReview takes 200 ms) on loopback, attacked in turn by clients without a
token: huge request heads, slow-loris heads, TCP connections that never start TLS, `/crdconvert`
floods of 8, 6.2 and 5 MB reviews and of 1.9 MB ones of shadow-sized objects (abuse_conversion.py:
each also times a one-shadow review meanwhile), bogus-token floods, malformed and cut-short
requests; then by authorized agents: a flood of versions no host offered (each a 422), bodies
nested past any parser's recursion limit (status reports and ConversionReviews), and (issue 29,
abuse_agents.py) one agent's 300 status writes and a deleted pod's token replayed, with what
they cost the fake cluster (status writes stored, pod GETs).

During each attack (in its own process, see abuse_attacks.py) this process times `/ping` and an
authorized agent request every 50 ms over keep-alive connections, and the same on a new
connection each time (`/ping` on the webhook port, as the kubelet probes it; the agent's request on
the agents' port, as an agent that reconnects), and samples the memory of the server and of its
conversion worker. The budget attacks (abuse_budgets.py) hold connections from loopback addresses
other than the probes' 127.0.0.1. It prints one
JSON object: for each attack what it got back, the latencies, the peak memory; and whether the
server's log stayed JSON. Loopback only, bounded: about 15 s per attack. `--attacks` runs only
the ones named (e.g. `--attacks crdconvert_flood_5mb crdconvert_flood`).
"""

from __future__ import annotations

import argparse
import http.client
import json
import signal
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from abuse_attacks import ATTACKS
from ready_file import READY_FILE, start_until_ready
from rig import emit, machine, mib, percentile, progress, read_process
from work_dir import measure_in_work_dir

HERE = Path(__file__).resolve().parent
PROBE_SECONDS = 0.05
# What the probe times: /ping and node 0's GET over keep-alive connections; /ping on a new
# connection to the webhook port (the kubelet's probe), and node 0's GET on a new connection.
KINDS = ("ping", "authorized", "ping_new_webhook", "authorized_new")
MEMORY_LIMIT_MIB = 256


class Probe:
    """Times /ping and an authorized GET of node 0's shadow, labelled by the current phase."""

    def __init__(self, ready: dict[str, Any]) -> None:
        self._ready = ready
        self._context = ssl.create_default_context(cafile=ready["ca"])
        node = ready["nodes"][0]
        self._agent_headers = {
            "BrupopNodeName": node["name"],
            "BrupopNodeUid": node["uid"],
            "BrupopK8sAuthToken": node["token"],
        }
        self.phase = "start"
        self.samples: dict[str, dict[str, list[float]]] = {}
        self.errors: dict[str, dict[str, int]] = {}
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._loop, args=(kind,), daemon=True) for kind in KINDS
        ]
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()

    def _loop(self, kind: str) -> None:
        agent = kind.startswith("authorized")
        path, headers = ("/bottlerocket-node-resource", self._agent_headers) if agent else (
            "/ping", {})  # fmt: skip
        port = self._ready.get("webhook_port") if kind == "ping_new_webhook" else None
        port = port or self._ready["port"]
        fresh = kind.endswith(("_new", "_new_webhook"))
        connection: http.client.HTTPSConnection | None = None
        while not self._stop.wait(PROBE_SECONDS):
            phase = self.phase
            if connection is None:
                connection = http.client.HTTPSConnection(
                    "127.0.0.1", port, context=self._context, timeout=10
                )
            started = time.perf_counter()
            try:
                connection.request("GET", path, headers=headers)
                response = connection.getresponse()
                response.read()
                outcome = str(response.status)
            except (OSError, http.client.HTTPException) as error:
                outcome = type(error).__name__
                connection.close()
                connection = None
            took = time.perf_counter() - started
            if fresh and connection is not None:
                connection.close()
                connection = None
            if outcome == "200":
                self.samples.setdefault(phase, {}).setdefault(kind, []).append(took)
            else:
                counts = self.errors.setdefault(phase, {})
                counts[f"{kind}: {outcome}"] = counts.get(f"{kind}: {outcome}", 0) + 1

    def latencies(self, phase: str) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for kind in KINDS:
            values = sorted(self.samples.get(phase, {}).get(kind, []))
            result[f"{kind}_ms"] = {
                "answered": len(values),
                "p50": round(1000 * percentile(values, 0.5), 1) if values else None,
                "p99": round(1000 * percentile(values, 0.99), 1) if values else None,
                "max": round(1000 * values[-1], 1) if values else None,
            }
        result["probe_failures"] = self.errors.get(phase, {})
        return result


class MemorySampler:
    """The RSS of the server and of its children (the conversion worker) every 0.1 s; the peak
    per phase of each, and of their sum (what the pod's memory limit counts)."""

    def __init__(self, pid: int) -> None:
        self._pid = pid
        self.phase = "start"
        self.peaks: dict[str, dict[str, int]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def peak_mib(self, phase: str) -> dict[str, float]:
        peaks = self.peaks.get(phase, {})
        return {part: mib(peaks.get(part, 0)) for part in ("server", "worker", "both")}

    def _loop(self) -> None:
        while not self._stop.wait(0.1):
            reading = read_process(self._pid)
            if reading is None:
                continue
            worker = sum(
                child.rss_kib
                for child in map(read_process, children_of(self._pid))
                if child is not None
            )
            peaks = self.peaks.setdefault(self.phase, {})
            for part, kib in (("server", reading.rss_kib), ("worker", worker)):
                peaks[part] = max(peaks.get(part, 0), kib)
            peaks["both"] = max(peaks.get("both", 0), reading.rss_kib + worker)


def children_of(pid: int) -> list[int]:
    """The process ids of `pid`'s children (whichever of its threads started them)."""
    found: list[int] = []
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found.extend(int(child) for child in children.read_text().split())
        except OSError:
            continue
    return found


def start_server(
    work: Path, args: argparse.Namespace
) -> tuple[subprocess.Popen[str], dict[str, Any]]:
    command = [
        sys.executable, str(HERE / "apiserver_main_process.py"), "--work", str(work),
        "--nodes", str(args.nodes), "--review-latency-ms", str(args.review_latency_ms),
        *(["--max-connections", str(args.max_connections)] if args.max_connections else []),
    ]  # fmt: skip
    server, ready = start_until_ready(command, work)
    deadline = time.monotonic() + 60
    context = ssl.create_default_context(cafile=ready["ca"])
    while True:
        try:
            connection = http.client.HTTPSConnection("127.0.0.1", ready["port"], context=context)
            connection.request("GET", "/ping")
            connection.getresponse().read()
            return server, ready
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the apiserver does not answer /ping") from None
            time.sleep(0.05)


def run_attack(name: str, work: Path, seconds: float) -> dict[str, Any]:
    command = [
        sys.executable, str(HERE / "abuse_attacks.py"), name,
        "--ready", str(work / READY_FILE), "--seconds", str(seconds),
    ]  # fmt: skip
    try:
        attack = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60)
    except subprocess.TimeoutExpired:
        return {"failed": f"the attack did not end within {seconds + 60:.0f} s"}
    if attack.returncode != 0:
        return {"failed": attack.stderr.strip().splitlines()[-1:]}
    result: dict[str, Any] = json.loads(attack.stdout)
    return result


def request_counts(ready: dict[str, Any]) -> dict[str, int]:
    """The server's own count of requests answered, by status (from /metrics)."""
    context = ssl.create_default_context(cafile=ready["ca"])
    connection = http.client.HTTPSConnection("127.0.0.1", ready["port"], context=context)
    connection.request("GET", "/metrics")
    text = connection.getresponse().read().decode()
    counts: dict[str, int] = {}
    for line in text.splitlines():
        if line.startswith("brupop_apiserver_requests_total{"):
            status = line.split('status="', 1)[1].split('"', 1)[0]
            counts[status] = counts.get(status, 0) + int(float(line.rsplit(" ", 1)[1]))
    return counts


def log_check(path: Path) -> dict[str, Any]:
    lines = path.read_text(errors="replace").splitlines()
    not_json = 0
    for line in lines:
        try:
            json.loads(line)
        except ValueError:
            not_json += 1
    return {
        "lines": len(lines),
        "lines_not_json": not_json,
        "tracebacks": sum("Traceback" in line for line in lines),
    }


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    facts = machine()
    progress("starting brupop apiserver over the fake cluster")
    server, ready = start_server(work, args)
    probe = Probe(ready)
    memory = MemorySampler(server.pid)
    phases: dict[str, Any] = {}
    try:
        for name in ["baseline", *args.attacks]:
            progress(f"{name}: {args.seconds:.0f} s")
            probe.phase = memory.phase = name
            if name == "baseline":
                time.sleep(args.seconds)
                outcome: dict[str, Any] = {}
            else:
                outcome = run_attack(name, work, args.seconds)
            probe.phase = memory.phase = f"after {name}"
            phases[name] = {
                "attack_got": outcome,
                **probe.latencies(name),
                "peak_rss_mib": memory.peak_mib(name),
            }
            time.sleep(args.pause)
        answered = request_counts(ready)
    finally:
        probe.stop()
        memory.stop()
        reading = read_process(server.pid)
        workers = [read_process(child) for child in children_of(server.pid)]
        server.send_signal(signal.SIGTERM)
        output, _ = server.communicate(timeout=60)
    server_facts = json.loads(output.strip().splitlines()[-1]) if output.strip() else {}
    return {
        "benchmark": "apiserver_abuse",
        "machine": facts,
        "settings": {
            "seconds_per_attack": args.seconds,
            "nodes": args.nodes,
            "token_review_latency_ms": args.review_latency_ms,
            "probe_every_ms": 1000 * PROBE_SECONDS,
            "max_connections": args.max_connections or "default",
        },
        "phases": phases,
        "server_peak_rss_mib_whole_run": mib(reading.peak_rss_kib) if reading else None,
        # The last worker's own peak (a worker replaced during the run took its peak with it).
        "worker_peak_rss_mib_whole_run": max(
            (mib(worker.peak_rss_kib) for worker in workers if worker is not None), default=None
        ),
        "memory_limit_mib": MEMORY_LIMIT_MIB,
        "token_reviews_whole_run": server_facts.get("token_reviews"),
        "server_exit_code": server_facts.get("exit_code", server.returncode),
        "server_requests_by_status": answered,
        "server_log": log_check(work / "apiserver.log"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--seconds", type=float, default=10.0, help="per attack (at most 60)")
    parser.add_argument("--pause", type=float, default=6.0, help="rest after each attack")
    parser.add_argument("--nodes", type=int, default=20)
    parser.add_argument("--review-latency-ms", type=float, default=200.0)
    parser.add_argument(
        "--max-connections",
        type=int,
        help="the server's APISERVER_MAX_CONNECTIONS (default: its own, 4096)",
    )
    parser.add_argument(
        "--attacks",
        nargs="+",
        choices=sorted(ATTACKS),
        default=list(ATTACKS),
        help="which, in order",
    )
    args = parser.parse_args()
    args.seconds = min(args.seconds, 60.0)
    emit(measure_in_work_dir("brupop-bench-abuse-", lambda work: measure(args, work)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
