"""Where the agent's memory goes: its resident set after each group of what it loads.

Each stage runs in a fresh interpreter (the venv's Python, as `brupop agent` does) that does
the work of every stage up to it, in the agent's order, and then reads its own
`/proc/self/status`: VmRSS, split into anonymous memory and file-backed pages (shared
libraries), and VmHWM. A second run of each, under `-X tracemalloc`, gives the memory of
Python objects alone; the rest of a step is native (extension modules, OpenSSL, pydantic-core's
Rust allocations). The last stages do the agent's run-time work against a loopback HTTPS
server: the TLS context over the CA file, one exchange, then a second connection from a thread
(the long-poll). A stage's cost is its figure minus the stage before's (medians of the runs).
What the whole agent reaches at its peak, with its loop, host commands and update, is
`agent_footprint.py`'s to measure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from rig import emit, machine, progress

from brupop.simulation.fleet.certificates import TlsFiles, write_loopback_tls


@dataclass(frozen=True)
class Stage:
    """One group of what the agent loads or does, as the Python code that does it."""

    name: str
    code: str


STAGES = (
    Stage("interpreter (python -c pass)", ""),
    Stage(
        "standard library of the agent's own code (signal, subprocess, threading, json, re, ...)",
        "import os, signal, enum, typing, re, datetime, json, threading, subprocess, select\n"
        "import time, random, traceback, pathlib, urllib.parse, importlib.util, contextlib",
    ),
    Stage("dataclasses (imports inspect, ast, dis, tokenize)", "import dataclasses"),
    Stage("pydantic_core (the Rust extension)", "import pydantic_core"),
    Stage(
        "pydantic: BaseModel, fields, validators, types (hashlib, secrets)",
        "from pydantic import BaseModel, Field, ConfigDict, ValidationError, AliasChoices\n"
        "from pydantic import field_validator, model_validator, BeforeValidator, AfterValidator\n"
        "from pydantic import PlainSerializer, StringConstraints",
    ),
    Stage(
        "pydantic's schema machinery, loaded by the first model (decimal, uuid, zoneinfo, ...)",
        "class _First(BaseModel):\n    one: int = 0",
    ),
    Stage(
        "domain root: states, versions, timestamps, errors, the shadow models",
        "import brupop.domain.states, brupop.domain.versions, brupop.domain.timestamps\n"
        "import brupop.domain.errors, brupop.domain.shadow",
    ),
    Stage(
        "domain.host: the host's answers (models), CommandResult, the agent's status and steps",
        "import brupop.domain.host.host, brupop.domain.host.command_result\n"
        "import brupop.domain.host.agent_status, brupop.domain.host.agent_steps",
    ),
    Stage(
        "ports and services.agent",
        "import brupop.services.agent.agent",
    ),
    Stage(
        "adapters.apiclient and adapters.system (event lines, clock)",
        "import brupop.adapters.apiclient.update_api, brupop.adapters.system.clock",
    ),
    Stage(
        "entrypoints: the command, the agent's settings model, logging directive, composition",
        "import brupop.cli.main, brupop.entrypoints.agent.main",
    ),
    Stage("http.client (email.parser) and ssl (libssl)", "import http.client, ssl"),
    Stage("adapters.apiserver_client", "import brupop.adapters.apiserver_client"),
    Stage(
        "run time: the settings read and validated",
        "from brupop.entrypoints.agent.settings import load_settings\n"
        "_settings = load_settings({'MY_NODE_NAME': 'bench-node-1'}, pathlib.Path('/nonexistent'))",
    ),
    Stage(
        "run time: the TLS context over the CA file",
        "from brupop.adapters.apiserver_client.connections import ApiserverConnections\n"
        "_pool = ApiserverConnections(URL, pathlib.Path(CA))\n"
        "_pool._tls_context()",
    ),
    Stage(
        "run time: one HTTPS exchange (TCP, TLS handshake, request, answer)",
        "def _ask(path):\n"
        "    _pool.exchange('GET', path, headers={}, body=None, connect_seconds=10,\n"
        "                   read_seconds=10, max_bytes=1 << 20)\n"
        "_ask('/ping')",
    ),
    Stage(
        "run time: a second connection, from a second thread (the long-poll)",
        "_poll = threading.Thread(target=_ask, args=('/slow',))\n"
        "_poll.start(); time.sleep(0.1); _ask('/ping'); _poll.join()",
    ),
)

# Reads this interpreter's own counters after the stages ran; prints them as one JSON line.
# Written without imports of its own, so it costs the stages nothing.
_MEASURE = """
def _measure():
    fields = {}
    with open('/proc/self/status') as status:
        for line in status:
            key, _, value = line.partition(':')
            if key in ('VmRSS', 'VmHWM', 'RssAnon', 'RssFile', 'RssShmem'):
                fields[key] = int(value.split()[0])
    heap = -1
    if 'tracemalloc' in sys._xoptions:
        import tracemalloc
        heap = tracemalloc.get_traced_memory()[0]
    sys.stdout.write('{"rss_kib": %d, "hwm_kib": %d, "anon_kib": %d, "file_kib": %d, '
                     '"python_heap_bytes": %d, "modules": %d}\\n' % (
        fields['VmRSS'], fields['VmHWM'], fields['RssAnon'],
        fields['RssFile'] + fields.get('RssShmem', 0), heap, len(sys.modules)))
_measure()
"""


def stage_program(upto: int, url: str, ca: str) -> str:
    """The code a fresh interpreter runs for stage `upto`: every stage up to it, then a look."""
    prelude = f"import sys\nURL = {url!r}\nCA = {ca!r}\n"
    body = "\n".join(stage.code for stage in STAGES[1 : upto + 1])
    return prelude + body + "\n" + _MEASURE


def run_stage(upto: int, url: str, ca: str, *, traced: bool) -> dict[str, int]:
    """One fresh interpreter through stage `upto`; its counters."""
    flags = ["-X", "tracemalloc"] if traced else []
    program = stage_program(upto, url, ca)
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    answer = subprocess.run(
        [sys.executable, *flags, "-c", program],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    if answer.returncode != 0:
        raise RuntimeError(f"stage {STAGES[upto].name!r} failed:\n{answer.stderr}")
    result: dict[str, int] = json.loads(answer.stdout.strip().splitlines()[-1])
    return result


class _Answers(BaseHTTPRequestHandler):
    """A loopback HTTPS server's answers: `/ping` at once, `/slow` after half a second."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        if self.path == "/slow":
            time.sleep(0.5)
        body = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: stdout carries the result."""


def serve_https(tls: TlsFiles) -> ThreadingHTTPServer:
    """A loopback HTTPS server with the test CA's certificate, answering in a thread."""
    import ssl  # only the measuring process needs it, never a stage's interpreter

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tls.cert, tls.key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, name="https", daemon=True).start()
    return server


def mib(kib: float) -> float:
    return round(kib / 1024, 2)


def summarise(runs: list[dict[str, int]], traced: list[dict[str, int]]) -> dict[str, float]:
    """The medians of one stage's runs, in MiB."""
    return {
        "rss_mib": mib(statistics.median(r["rss_kib"] for r in runs)),
        "peak_mib": mib(statistics.median(r["hwm_kib"] for r in runs)),
        "anonymous_mib": mib(statistics.median(r["anon_kib"] for r in runs)),
        "file_backed_mib": mib(statistics.median(r["file_kib"] for r in runs)),
        "python_objects_mib": mib(statistics.median(r["python_heap_bytes"] for r in traced) / 1024),
        "modules": int(statistics.median(r["modules"] for r in runs)),
    }


def with_steps(stages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each stage's own cost: its figures minus the stage before's."""
    keys = ("rss_mib", "anonymous_mib", "file_backed_mib", "python_objects_mib")
    before: dict[str, Any] | None = None
    for stage in stages:
        if before is not None:
            stage["adds"] = {key: round(stage[key] - before[key], 2) for key in keys}
            stage["adds"]["modules"] = stage["modules"] - before["modules"]
        before = stage
    return stages


def measure(repeats: int, work: Path) -> dict[str, Any]:
    tls = write_loopback_tls(work)
    server = serve_https(tls)
    url = f"https://127.0.0.1:{server.server_address[1]}"
    facts = machine()
    stages: list[dict[str, Any]] = []
    try:
        for index, stage in enumerate(STAGES):
            progress(f"stage {index}: {stage.name}")
            runs = [run_stage(index, url, str(tls.ca_cert), traced=False) for _ in range(repeats)]
            traced = [run_stage(index, url, str(tls.ca_cert), traced=True) for _ in range(repeats)]
            stages.append({"stage": stage.name, **summarise(runs, traced)})
    finally:
        server.shutdown()
    return {
        "benchmark": "agent_memory_breakdown",
        "machine": facts,
        "settings": {"repeats": repeats, "figures": "medians of the repeats, MiB"},
        "interpreter_mib": stages[0]["rss_mib"],
        "after_imports_mib": next(
            s["rss_mib"] for s in stages if s["stage"].startswith("adapters.apiserver_client")
        ),
        "after_run_time_work_mib": stages[-1]["rss_mib"],
        "stages": with_steps(stages),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=3, help="runs of each stage (default 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="brupop-bench-memory-") as work:
        emit(measure(max(1, args.repeats), Path(work)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
