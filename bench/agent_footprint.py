"""Benchmark 1, agent footprint: one real `brupop agent` process against the apiserver and the
host emulator, with the original's intervals.

It measures the time from the agent's start to its first status report, its CPU and memory
while idle (no update asked for, long-polling its shadow), and during one whole update driven
by the real controller: stage, drain, reboot (the emulated host kills the agent, which is then
started again, as the kubelet would), report the new version, back to Idle.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_phases import PhaseMeter
from rig import (
    NAMESPACE,
    VENV_BIN,
    AgentNode,
    ControllerThread,
    LoopbackApiserver,
    ProcessReading,
    RequestClock,
    add_agent_nodes,
    emit,
    machine,
    memory_breakdown,
    mib,
    progress,
    read_process,
    send_logs_to,
    start_apiserver,
)

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import OwnerReference
from brupop.domain.shadow import Shadow, shadow_name
from brupop.domain.states import UpdateState
from brupop.ports.errors import NotFoundError

NODE = "bench-node-1"
FROM_VERSION = "1.0.0"
TO_VERSION = "1.1.0"
GOAL_PEAK_RSS_MIB = 40.0
GOAL_IDLE_CPU_MS_PER_S = 2.0


@dataclass
class AgentRun:
    """One agent process: its readings (sampled), and what the OS said when it was reaped."""

    process: subprocess.Popen[bytes]
    started_at: float
    readings: list[ProcessReading] = field(default_factory=list)
    exit_code: int | None = None
    rusage_cpu_seconds: float = 0.0  # its own and its reaped children's, at exit
    # Not ru_maxrss: Linux carries the parent's RSS at fork time into an exec'd child's
    # ru_maxrss, so it would report this benchmark process (with its apiserver), not the agent.

    def last(self) -> ProcessReading:
        return self.readings[-1]

    def peak_rss_kib(self) -> int:
        return max((r.peak_rss_kib for r in self.readings), default=0)


class Sampler:
    """Reads /proc of the current agent process every `interval` seconds, in a thread."""

    def __init__(self, interval: float) -> None:
        self._interval = interval
        self._run: AgentRun | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sampler", daemon=True)
        self._thread.start()

    def follow(self, run: AgentRun | None) -> None:
        self._run = run

    def sample_now(self) -> ProcessReading | None:
        run = self._run
        if run is None:
            return None
        reading = read_process(run.process.pid)
        if reading is not None:
            run.readings.append(reading)
        return reading

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            self.sample_now()


def agent_env(node: AgentNode, apiserver: LoopbackApiserver, work: Path) -> dict[str, str]:
    """A DaemonSet pod's environment: only what the agent needs, the original's intervals."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "MY_NODE_NAME": node.name,
        "APISERVER_URL": apiserver.url,
        "AGENT_TOKEN_PATH": str(node.token_path),
        "AGENT_CA_PATH": str(apiserver.tls.ca_cert),
        "APICLIENT_PATH": str(VENV_BIN / "brupop-host-emulator"),
        "BRUPOP_NAMESPACE": NAMESPACE,
        "LOGGING_FORMATTER": "json",
        "TERMINATION_LOG": str(work / "termination-log"),
        "BRUPOP_SIM_HOST_DIR": str(work / "host"),
        "BRUPOP_SIM_CURRENT_VERSION": FROM_VERSION,
        "BRUPOP_SIM_TARGET_VERSION": TO_VERSION,
        "BRUPOP_SIM_NODE_NAME": node.name,
    }


def start_agent(env: dict[str, str], log_path: Path) -> AgentRun:
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "brupop", "agent"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            process_group=0,
        )
    return AgentRun(process=process, started_at=time.monotonic())


def reap(run: AgentRun, sampler: Sampler, timeout: float) -> None:
    """Wait for the agent to end and keep what the kernel accounted for it."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(run.process.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"the agent did not exit within {timeout:.0f} s")
        sampler.sample_now()
        time.sleep(0.02)
    run.process.returncode = run.exit_code = os.waitstatus_to_exitcode(status)
    run.rusage_cpu_seconds = usage.ru_utime + usage.ru_stime
    with contextlib.suppress(ProcessLookupError):  # an apiclient call left behind goes too
        os.killpg(run.process.pid, signal.SIGKILL)


def find_shadow(cluster: InMemoryCluster) -> Shadow | None:
    try:
        return cluster.shadows.get(shadow_name(NODE))
    except NotFoundError:
        return None


def wait_for(what: str, check: Any, timeout: float, poll: float = 0.01) -> float:
    """Poll `check()` until true; the monotonic time it became true."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(poll)
    return time.monotonic()


def updated(cluster: InMemoryCluster) -> bool:
    shadow = find_shadow(cluster)
    return (
        shadow is not None
        and shadow.status is not None
        and shadow.status.current_version == TO_VERSION
        and shadow.status.current_state is UpdateState.IDLE
        and shadow.spec.state is UpdateState.IDLE
    )


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    facts = machine()
    send_logs_to(work / "cluster.log")
    cluster = InMemoryCluster(NAMESPACE)
    (node,) = add_agent_nodes(cluster, [NODE], work / "tokens")
    workload = OwnerReference(kind="ReplicaSet", name="web-1", controller=True)
    cluster.add_pod("default", "web-1-a", NODE, labels={"app": "web"}, owners=(workload,))
    apiserver = start_apiserver(cluster, work)
    env = agent_env(node, apiserver, work)
    env.update(item.split("=", 1) for item in args.agent_env)
    sampler = Sampler(args.sample_seconds)
    requests = RequestClock(apiserver)
    phases = PhaseMeter(apiserver)
    runs: list[AgentRun] = []
    try:
        progress("starting the agent (original intervals)")
        runs.append(start_agent(env, work / "agent.log"))
        sampler.follow(runs[0])
        phases.follow(runs[0].process.pid)
        first_report = wait_for(
            "the first status report",
            lambda: (s := find_shadow(cluster)) is not None and s.status is not None,
            timeout=120,
        )
        first_report_seconds = first_report - runs[0].started_at
        first_request_seconds = requests.times[0] - runs[0].started_at
        first_report_phases = phases.between(runs[0].started_at, first_report)
        progress(f"first status report after {first_report_seconds:.2f} s; settling")
        time.sleep(args.settle_seconds)
        idle_start = sampler.sample_now()
        progress(f"measuring idle for {args.idle_seconds:.0f} s")
        time.sleep(args.idle_seconds)
        idle_end = sampler.sample_now()
        idle_memory = memory_breakdown(runs[0].process.pid)
        if idle_start is None or idle_end is None or idle_memory is None:
            raise RuntimeError("the agent exited while idle; see agent.log")
        idle_seconds = idle_end.at - idle_start.at
        idle_requests = requests.between(idle_start.at, idle_end.at)

        progress("starting the controller: one whole update")
        update_start = sampler.sample_now()
        assert update_start is not None
        controller = ControllerThread(cluster, limit=1)
        try:
            reap(runs[0], sampler, timeout=args.update_timeout)  # the reboot ends it
            progress(f"agent exited with {runs[0].exit_code} (reboot); starting it again")
            runs.append(start_agent(env, work / "agent.log"))
            sampler.follow(runs[1])
            phases.follow(runs[1].process.pid)
            update_end = wait_for("the update", lambda: updated(cluster), args.update_timeout)
            after_update = sampler.sample_now()
            assert after_update is not None
        finally:
            controller.stop()
        progress("update done; stopping the agent")
        runs[1].process.send_signal(signal.SIGTERM)
        reap(runs[1], sampler, timeout=30)
    finally:
        requests.stop()
        sampler.stop()
        phases.stop()
        for run in runs:
            if run.exit_code is None:
                run.process.kill()
                run.process.wait()
        apiserver.stop()

    update_seconds = update_end - update_start.at
    first, second = runs
    # CPU of the update: the first process from the update's start to its exit (exact, from
    # wait4), then the restarted one up to the moment the update was done (sampled).
    agent_cpu = (
        first.rusage_cpu_seconds - update_start.cpu_seconds - update_start.children_cpu_seconds
    ) + (after_update.cpu_seconds + after_update.children_cpu_seconds)
    agent_own_cpu = (first.last().cpu_seconds - update_start.cpu_seconds) + after_update.cpu_seconds
    idle_cpu = idle_end.cpu_seconds - idle_start.cpu_seconds
    idle_children_cpu = idle_end.children_cpu_seconds - idle_start.children_cpu_seconds
    peak_rss_kib = max(first.peak_rss_kib(), second.peak_rss_kib())
    idle_ms_per_s = 1000 * idle_cpu / idle_seconds
    return {
        "benchmark": "agent_footprint",
        "machine": facts,
        "settings": {
            "agent_intervals": "defaults (loop 5 s, update check 120 s, shadow long-poll 30 s, "
            "host poll 2 s, apiclient rate 1 per 10 s after a burst of 2)",
            "emulated_host_seconds": {"refresh": 0.2, "prepare": 0.5, "activate": 0.2},
            "extra_agent_env": args.agent_env,
            "idle_seconds": round(idle_seconds, 1),
            "sample_seconds": args.sample_seconds,
        },
        "start_to_first_apiserver_request_seconds": round(first_request_seconds, 2),
        "start_to_first_status_report_seconds": round(first_report_seconds, 2),
        "cpu_ms_to_first_status_report_by_phase": first_report_phases,
        "peak_rss_mib": mib(peak_rss_kib),
        "peak_rss_mib_by_process": [mib(first.peak_rss_kib()), mib(second.peak_rss_kib())],
        "idle": {
            "memory": idle_memory,
            "cpu_ms_per_second": round(idle_ms_per_s, 3),
            "cpu_seconds_per_minute": round(60 * idle_cpu / idle_seconds, 4),
            "apiclient_cpu_ms_per_second": round(1000 * idle_children_cpu / idle_seconds, 3),
            "apiserver_requests": len(idle_requests),
            "apiserver_requests_per_hour": requests_per_hour(idle_requests, idle_seconds),
            "cpu_ms_by_phase": phases.between(idle_start.at, idle_end.at),
            "connections_opened": phases.sockets_opened(idle_start.at, idle_end.at),
        },
        "update": {
            "seconds": round(update_seconds, 1),
            "agent_exit_codes": [first.exit_code, second.exit_code],
            "cpu_seconds_agent": round(agent_own_cpu, 3),
            "cpu_seconds_with_apiclient": round(agent_cpu, 3),
            "cpu_seconds_per_minute_agent": round(60 * agent_own_cpu / update_seconds, 3),
            "cpu_seconds_per_minute_with_apiclient": round(60 * agent_cpu / update_seconds, 3),
            # The agent's own CPU, by phase (agent_phases.py); apiclient's is not in it.
            "cpu_ms_by_phase": phases.between(update_start.at, after_update.at),
            "connections_opened": phases.sockets_opened(update_start.at, after_update.at),
        },
        "goals": {
            "peak_rss_mib_at_most": GOAL_PEAK_RSS_MIB,
            "idle_cpu_ms_per_second_at_most": GOAL_IDLE_CPU_MS_PER_S,
            "peak_rss_met": mib(peak_rss_kib) <= GOAL_PEAK_RSS_MIB,
            "idle_cpu_met": idle_ms_per_s <= GOAL_IDLE_CPU_MS_PER_S,
        },
    }


def requests_per_hour(times: list[float], window: float) -> float:
    """From the mean gap between requests when there are several (a window that is not a
    multiple of the long-poll would miscount), else from the count."""
    if len(times) >= 3:
        return round(3600 * (len(times) - 1) / (times[-1] - times[0]), 1)
    return round(3600 * len(times) / window, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--idle-seconds",
        type=float,
        default=120.0,
        help="idle window; 120 s holds one update check (default 120)",
    )
    parser.add_argument(
        "--settle-seconds",
        type=float,
        default=5.0,
        help="wait after the first status report before the idle window",
    )
    parser.add_argument("--update-timeout", type=float, default=300.0)
    parser.add_argument(
        "--sample-seconds", type=float, default=0.1, help="how often /proc of the agent is read"
    )
    parser.add_argument(
        "--agent-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="one more variable in the agent's environment (for experiments)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="brupop-bench-agent-"))
    try:
        result = measure(args, work)
    except Exception:
        progress(f"failed; logs kept in {work}")
        raise
    if args.keep:
        progress(f"logs kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
