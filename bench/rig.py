"""What the benchmarks share: the machine's facts, /proc readings, and a loopback apiserver.

The apiserver is the real app over the in-memory cluster, served over HTTPS with a throwaway
CA; every node gets a DaemonSet-owned agent pod and a projected token file, as in a cluster.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brupop.adapters.apiserver_http.app import ApiserverOptions
from brupop.adapters.apiserver_http.routes.metrics import ApiserverMetrics
from brupop.adapters.apiserver_http.serving.server import RunningServer, serve_in_thread
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import COMPONENT_LABEL, OwnerReference
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from brupop.entrypoints.apiserver.container import apiserver_container
from brupop.entrypoints.controller.container import build_controller
from brupop.entrypoints.logging.logs import configure_logging
from brupop.services.apiserver.authorization.authorizer import AGENT_SERVICE_ACCOUNT
from brupop.services.controller.config import ControllerConfig
from brupop.simulation.fleet.certificates import TlsFiles, write_loopback_tls

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024
NAMESPACE = "brupop-bottlerocket-aws"
AGENT_DAEMONSET = "brupop-agent"
VENV_BIN = Path(sys.executable).parent
ALWAYS = "* * * * * * *"  # the default SCHEDULER_CRON_EXPRESSION: updates may start any time


def progress(message: str) -> None:
    """One line of progress on stderr (stdout carries only the result)."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def emit(result: dict[str, Any], keep: Path | None = None) -> None:
    """The benchmark's one JSON object on stdout, and in `keep` (bench/results/...) when given."""
    text = json.dumps(result, indent=2, default=str)
    if keep is not None:
        keep.parent.mkdir(parents=True, exist_ok=True)
        keep.write_text(text + "\n")
    print(text)


def send_logs_to(path: Path) -> None:
    """Route this process's structlog and stdlib logging (apiserver, controller) to `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    stream = path.open("a", encoding="utf-8", buffering=1)
    configure_logging("bench", formatter="json", stream=stream)
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addHandler(logging.StreamHandler(stream))
    root.setLevel(logging.INFO)


def machine() -> dict[str, Any]:
    """Cores, CPU model, memory, Python and kernel: what the figures were measured on."""
    model = ""
    with Path("/proc/cpuinfo").open() as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    memory_kib = 0
    with Path("/proc/meminfo").open() as meminfo:
        for line in meminfo:
            if line.startswith("MemTotal:"):
                memory_kib = int(line.split()[1])
    return {
        "cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)),
        "cpu_model": model,
        "memory_mib": memory_kib // 1024,
        "python": platform.python_version(),
        "kernel": platform.release(),
        # Other work on the machine skews every figure; this says how busy it was.
        "load_average_1min_at_start": round(os.getloadavg()[0], 2),
    }


@dataclass(frozen=True)
class ProcessReading:
    """One look at a live process: CPU seconds (its own and its reaped children's) and memory."""

    at: float  # time.monotonic()
    cpu_seconds: float
    children_cpu_seconds: float
    rss_kib: int
    peak_rss_kib: int  # VmHWM: the highest RSS so far


def read_process(pid: int) -> ProcessReading | None:
    """The process's counters now; None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    # Fields after the command: state=0 ... utime=11 stime=12 cutime=13 cstime=14.
    utime, stime, cutime, cstime = (int(value) for value in fields[11:15])
    memory = {}
    for line in status.splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            memory[key] = int(value.split()[0])
    if "VmRSS" not in memory:  # a zombie: counters no longer meaningful
        return None
    return ProcessReading(
        at=time.monotonic(),
        cpu_seconds=(utime + stime) / CLOCK_TICKS,
        children_cpu_seconds=(cutime + cstime) / CLOCK_TICKS,
        rss_kib=memory["VmRSS"],
        peak_rss_kib=memory["VmHWM"],
    )


def own_rss_kib() -> tuple[int, int]:
    """(current RSS, peak RSS) of this process, in KiB."""
    reading = read_process(os.getpid())
    assert reading is not None
    return reading.rss_kib, reading.peak_rss_kib


def mib(kib: float) -> float:
    return round(kib / 1024, 1)


def percentile(sorted_values: list[float], fraction: float) -> float:
    """The value below which `fraction` of the sorted values fall (nearest rank)."""
    if not sorted_values:
        return float("nan")
    rank = max(0, min(len(sorted_values) - 1, round(fraction * len(sorted_values)) - 1))
    return sorted_values[rank]


@dataclass(frozen=True)
class AgentNode:
    """A node an agent may act for: its UID and the file holding its agent's token."""

    name: str
    uid: str
    pod: str
    token_path: Path


def add_agent_nodes(cluster: InMemoryCluster, names: list[str], work_dir: Path) -> list[AgentNode]:
    """Opted-in Nodes, each with its agent pod (what the apiserver authorizes) and token file."""
    work_dir.mkdir(parents=True, exist_ok=True)
    nodes = []
    for name in names:
        node = cluster.add_node(name, labels={OPT_IN_LABEL: OPT_IN_VALUE})
        pod = f"{AGENT_DAEMONSET}-{name}"
        cluster.add_pod(
            cluster.namespace,
            pod,
            name,
            labels={COMPONENT_LABEL: "agent"},
            owners=(OwnerReference(kind="DaemonSet", name=AGENT_DAEMONSET, controller=True),),
            service_account=AGENT_SERVICE_ACCOUNT,
        )
        token_path = work_dir / f"token-{name}"
        token_path.write_text(cluster.issue_token(cluster.namespace, pod, ttl_seconds=24 * 3600.0))
        nodes.append(AgentNode(name=name, uid=node.uid, pod=pod, token_path=token_path))
    return nodes


@dataclass
class LoopbackApiserver:
    """The real apiserver app over an in-memory cluster, on 127.0.0.1 over HTTPS."""

    cluster: InMemoryCluster
    server: RunningServer
    metrics: ApiserverMetrics  # the app's own counters
    tls: TlsFiles

    @property
    def url(self) -> str:
        return self.server.base_url

    def requests_answered(self, route: str | None = None) -> int:
        """HTTP requests answered so far (on `route`, or all), from the app's own metrics."""
        total = 0.0
        for family in self.metrics.requests.collect():
            for sample in family.samples:
                if sample.name.endswith("_total") and route in (None, sample.labels["route"]):
                    total += sample.value
        return int(total)

    def stop(self) -> None:
        self.server.stop()


def start_apiserver(
    cluster: InMemoryCluster, work_dir: Path, options: ApiserverOptions | None = None
) -> LoopbackApiserver:
    """Serve the apiserver app over `cluster` on a free loopback port."""
    tls = write_loopback_tls(work_dir / "tls")
    container = apiserver_container(
        cluster=cluster, options=options or ApiserverOptions(namespace=cluster.namespace)
    )
    server = serve_in_thread(
        container.app(), certfile=tls.cert, keyfile=tls.key, host="127.0.0.1", port=0
    )
    return LoopbackApiserver(cluster, server, container.metrics(), tls)


class ControllerThread:
    """The real controller service over `cluster`, in a thread (as `brupop simulate` runs it)."""

    def __init__(
        self,
        cluster: InMemoryCluster,
        *,
        limit: int | None,
        tick_seconds: float = 2.0,
        lease_seconds: float = 15.0,
        renew_seconds: float = 5.0,
    ) -> None:
        config = ControllerConfig(
            rollout_rules=RolloutRules(limit=ConcurrencyLimit(limit)),
            window=MaintenanceWindow.starting(ALWAYS, now=cluster.clock.now()),
            namespace=cluster.namespace,
            identity="brupop-controller-bench",
            tick_seconds=tick_seconds,
            lease_seconds=lease_seconds,
            renew_seconds=renew_seconds,
        )
        self.service = build_controller(cluster, config, cluster.clock)
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self.service.run, args=(self._stop,), name="controller", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def memory_breakdown(pid: int) -> dict[str, float] | None:
    """RSS split into private anonymous memory and shared file pages (libraries), in MiB."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    values = {}
    for line in text.splitlines()[1:]:
        key, _, rest = line.partition(":")
        values[key] = int(rest.split()[0])
    return {
        "rss_mib": mib(values["Rss"]),
        "anonymous_mib": mib(values["Anonymous"]),
        "file_backed_mib": mib(values["Rss"] - values["Anonymous"]),
        "pss_mib": mib(values["Pss"]),
    }


class RequestClock:
    """Notes when the apiserver answers requests, by polling its request counter in a thread."""

    def __init__(self, apiserver: LoopbackApiserver, poll_seconds: float = 0.02) -> None:
        self._apiserver = apiserver
        self._poll = poll_seconds
        self.times: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="request-clock", daemon=True)
        self._thread.start()

    def between(self, start: float, end: float) -> list[float]:
        return [t for t in self.times if start <= t <= end]

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        seen = self._apiserver.requests_answered()
        while not self._stop.wait(self._poll):
            count = self._apiserver.requests_answered()
            now = time.monotonic()
            self.times.extend([now] * (count - seen))
            seen = count
