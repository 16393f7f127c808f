#!/usr/bin/env python3
"""The controller's and the apiserver's resident memory at rest, without a cluster: each started
as `python -m brupop` starts it, over a stub Kubernetes API on loopback, its RSS read after
`--seconds`. Where the memory of docs/bench.md section 10 goes, without the real control plane.

    bench/control_memory.py --optimize 0 2 --hide "" rich,kubernetes_validate

The stub answers every list with no items, holds every watch open until its timeout, returns
404 for an object it does not hold and keeps what is written (the Lease), so the controller
takes the lead and runs its passes; the apiserver finds no issuer keys and no agent connects.
`--hide` hides packages from the processes as if not installed (`rich` and
`kubernetes_validate` are in the dev venv only: "rich,kubernetes_validate" is the image's set).
Prints one JSON object and writes it to bench/results/control_memory.json (or --out).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_cluster import proc_stats
from rig import emit, machine

from brupop.simulation.fleet.certificates import write_loopback_tls

RESULTS = Path(__file__).resolve().parent / "results"
COLLECTIONS = {"nodes", "pods", "bottlerocketshadows", "bottlerocketupdatepolicies", "leases",
               "serviceaccounts", "events", "poddisruptionbudgets", "deployments",
               "statefulsets", "replicasets", "daemonsets"}  # fmt: skip
# Runs brupop with the packages named in argv[1] hidden, as if they were not installed.
LAUNCH = """import runpy, sys
for name in filter(None, sys.argv[1].split(",")):
    sys.modules[name] = None
sys.argv = ["brupop", *sys.argv[2:]]
runpy.run_module("brupop", run_name="__main__", alter_sys=True)
"""


class StubApi(BaseHTTPRequestHandler):
    """Empty lists, watches held until their timeout, written objects kept and read back."""

    protocol_version = "HTTP/1.1"
    kept: dict[str, Any] = {}
    version = [10]
    lock = threading.Lock()

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        url = urlparse(self.path)
        query = parse_qs(url.query)
        if query.get("watch", ["false"])[0].lower() in ("true", "1"):
            self._hold_watch(float(query.get("timeoutSeconds", ["300"])[0]))
            return
        with self.lock:
            kept = self.kept.get(url.path)
        if kept is not None:
            self._answer(200, kept)
        elif url.path.rstrip("/").rsplit("/", 1)[-1] in COLLECTIONS:
            listed = {"resourceVersion": str(self.version[0])}
            self._answer(200, {"kind": "List", "apiVersion": "v1", "metadata": listed, "items": []})
        else:
            self._answer(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                               "reason": "NotFound", "code": 404, "metadata": {}})  # fmt: skip

    def do_POST(self) -> None:
        body = self._keep(lambda name: urlparse(self.path).path.rstrip("/") + "/" + name)
        self._answer(201, body)

    def do_PUT(self) -> None:
        self._answer(200, self._keep(lambda _name: urlparse(self.path).path))

    do_PATCH = do_PUT

    def _keep(self, path_of: Any) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        body: dict[str, Any] = json.loads(self.rfile.read(length) or b"{}")
        metadata = body.setdefault("metadata", {})
        with self.lock:
            self.version[0] += 1
            metadata["resourceVersion"] = str(self.version[0])
            metadata.setdefault(
                "name", f"{metadata.get('generateName', 'object-')}{self.version[0]}"
            )
            self.kept[path_of(metadata["name"])] = body
        return body

    def _hold_watch(self, seconds: float) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        time.sleep(seconds)
        try:
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            return

    def _answer(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def write_kubeconfig(path: Path, port: int) -> None:
    """A kubeconfig for the stub, as `brupop` reads one outside a pod."""
    cluster = {"name": "stub", "cluster": {"server": f"http://127.0.0.1:{port}"}}
    user = {"name": "stub", "user": {"token": "stub-token"}}
    context = {"name": "stub", "context": {"cluster": "stub", "user": "stub"}}
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "Config", "clusters": [cluster],
                                "users": [user], "contexts": [context],
                                "current-context": "stub"}))  # fmt: skip


def environment(process: str, work: Path, optimize: str) -> dict[str, str]:
    """What the chart gives each process, over the stub's kubeconfig."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "KUBECONFIG": str(work / "config"),
           "BRUPOP_NAMESPACE": "brupop-bottlerocket-aws", "BRUPOP_CLUSTER": "kubernetes",
           "LOGGING_FORMATTER": "json", "PYTHONOPTIMIZE": optimize}  # fmt: skip
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    if process == "controller":
        return env | {"MY_NODE_NAME": "node-a", "CONTROLLER_METRICS_PORT": "0",
                      "CONTROLLER_BIND_ADDRESS": "127.0.0.1"}  # fmt: skip
    tls = write_loopback_tls(work / "tls")
    with socket.socket() as probe:  # a free port: the apiserver takes no 0
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    return env | {"APISERVER_INTERNAL_PORT": port, "APISERVER_BIND_ADDRESS": "127.0.0.1",
                  "APISERVER_TLS_CERT_PATH": str(tls.cert), "APISERVER_TLS_KEY_PATH": str(tls.key),
                  "TERMINATION_LOG": str(work / "termination-log")}  # fmt: skip


def resident(process: str, work: Path, optimize: str, hide: str, seconds: float) -> float:
    """The process's RSS (MiB) `seconds` after its start; it is stopped after."""
    log = (work / f"{process}-{optimize}-{hide or 'none'}.log").open("wb")
    started = subprocess.Popen(
        [sys.executable, "-c", LAUNCH, hide, process],
        env=environment(process, work, optimize),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        time.sleep(seconds)
        if started.poll() is not None:
            raise RuntimeError(f"{process} ended early ({started.returncode}): see {log.name}")
        return round(proc_stats.rss_mib(started.pid), 1)
    finally:
        started.terminate()
        started.wait(timeout=60)
        log.close()


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), StubApi)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    write_kubeconfig(work / "config", server.server_address[1])
    figures = []
    try:
        for process in ("controller", "apiserver"):
            for hide in args.hide:
                for optimize in args.optimize:
                    resident(process, work, optimize, hide, args.seconds / 2)  # bytecode written
                    rss = resident(process, work, optimize, hide, args.seconds)
                    figures.append({"process": process, "optimize": optimize, "hidden": hide,
                                    "rss_mib": rss})  # fmt: skip
                    print(json.dumps(figures[-1]), file=sys.stderr)
    finally:
        server.shutdown()
    return {"benchmark": "control_memory", "machine": machine(),
            "load_average": os.getloadavg(), "seconds": args.seconds, "figures": figures,
            "method": "VmRSS of `python -m brupop controller|apiserver` (through a launcher that"
            " hides --hide's packages) over a stub Kubernetes API, after --seconds; each"
            " measured run follows one that writes the level's bytecode"}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--optimize", nargs="+", default=["0", "2"], choices=["0", "1", "2"])
    parser.add_argument("--hide", nargs="+", default=["", "rich,kubernetes_validate"])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--out", type=Path, help="default: results/control_memory.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="brupop-control-memory-") as folder:
        result = measure(args, Path(folder))
    emit(result, args.out or RESULTS / "control_memory.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
