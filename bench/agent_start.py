"""Benchmark: the agent's CPU from exec to its first request to the apiserver.

Under the chart's `cpu: 10m` every millisecond of CPU an agent spends starting is a second of
wall time before its node reports. Each run starts `brupop agent` cold (a new process) against
a loopback stand-in for the apiserver: a TLS listener with the agent's CA that notes the
agent's CPU (user + sys, the kernel's exact runtime in /proc/PID/schedstat) when the TCP
connection arrives and when the first request's headers have been read, then kills the agent.
A bare interpreter (`python -c pass`, CPU from wait4) is measured beside it, and the agent's
peak RSS when it asks. Medians of N runs. PYTHONPATH, when set, is passed to the agent (to
measure another tree's source with the same interpreter). `--before SRC` measures another tree's
source interleaved with this one's, run for run, so that both see the same machine load.
`--image-root DIR` (root) runs the agent as its image does instead: the image's own interpreter
and entry script in a chroot of the image's read-only root file system (`podman image mount`),
as its user, with the image's environment; the wrapper that gets it there is measured alone.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rig import emit, machine, progress

from brupop.simulation.fleet.certificates import TlsFiles, write_loopback_tls

NODE = "bench-node-1"
IMAGE_USER = "10001:10001"
IMAGE_ENV = {
    "PATH": "/opt/brupop/bin:/usr/bin",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
    "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt",
}
IMAGE_WORK = "/tmp"  # where the bench's files appear inside the image's root
GOAL_MS = 60.0
HEADERS_END = b"\r\n\r\n"
MAX_HEADER_BYTES = 64 * 1024


@dataclass
class FirstRequest:
    """What the stand-in saw of one agent: its CPU at the connection and at the request."""

    connect_cpu_ms: float | None = None
    request_cpu_ms: float | None = None
    peak_rss_mib: float | None = None
    request_line: str = ""


def peak_rss_mib(pid: int) -> float | None:
    """The process's peak resident set so far (VmHWM), in MiB; None once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


def cpu_ms(pid: int) -> float | None:
    """The CPU (user + sys) process `pid` has used so far, in ms; None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/schedstat").read_text().split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return int(fields[0]) / 1e6


class StandIn:
    """A loopback HTTPS listener that records one agent's first connection and request."""

    def __init__(self, tls: TlsFiles) -> None:
        self._context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._context.load_cert_chain(tls.cert, tls.key)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"https://127.0.0.1:{self._listener.getsockname()[1]}"

    def serve_one(self, pid: int, timeout: float) -> FirstRequest:
        """Wait for agent `pid` to connect and send its first request's headers."""
        seen = FirstRequest()
        self._listener.settimeout(timeout)
        connection, _ = self._listener.accept()
        seen.connect_cpu_ms = cpu_ms(pid)
        with connection:
            connection.settimeout(timeout)
            with self._context.wrap_socket(connection, server_side=True) as secure:
                data = b""
                while HEADERS_END not in data and len(data) < MAX_HEADER_BYTES:
                    chunk = secure.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                seen.request_cpu_ms = cpu_ms(pid)
                seen.peak_rss_mib = peak_rss_mib(pid)
                seen.request_line = data.split(b"\r\n", 1)[0].decode("ascii", "replace")
        return seen

    def close(self) -> None:
        self._listener.close()


def agent_env(url: str, tls: TlsFiles, work: Path) -> dict[str, str]:
    """A DaemonSet pod's environment, pointed at the stand-in."""
    token = work / "token"
    token.write_text("bench-token")
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "MY_NODE_NAME": NODE,
        "APISERVER_URL": url,
        "AGENT_TOKEN_PATH": str(token),
        "AGENT_CA_PATH": str(tls.ca_cert),
        "APICLIENT_PATH": "/bin/false",
        "BRUPOP_NAMESPACE": "brupop-bottlerocket-aws",
        "LOGGING_FORMATTER": "json",
        "TERMINATION_LOG": str(work / "termination-log"),
    } | ({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {})


def one_agent(
    command: list[str], env: dict[str, str], stand_in: StandIn, log: Path
) -> FirstRequest:
    """Start the agent, wait for its first request, then kill it."""
    with log.open("wb") as output:
        process = subprocess.Popen(
            command, env=env, stdin=subprocess.DEVNULL, stdout=output, stderr=output
        )
    try:
        seen = stand_in.serve_one(process.pid, timeout=30.0)
    except OSError as error:  # no connection in time: say why, with what the agent wrote
        seen = FirstRequest()
        problem = repr(error)
    else:
        problem = ""
    process.kill()
    process.wait()
    if seen.request_cpu_ms is None:
        written = log.read_text(errors="replace")[-2000:]
        raise RuntimeError(f"no request from the agent: {problem}; it wrote: {written!r}")
    return seen


def bare_start_ms(python: str, *flags: str) -> float:
    """CPU of `python [flags] -c pass`, from exec to exit (wait4's user + sys)."""
    return exit_cpu_ms([python, *flags, "-c", "pass"])


def exit_cpu_ms(command: list[str]) -> float:
    """CPU of `command`, from exec to exit (wait4's user + sys)."""
    process = subprocess.Popen(command)
    _, _, usage = os.wait4(process.pid, 0)
    process.returncode = 0
    return (usage.ru_utime + usage.ru_stime) * 1000


# Enters a private mount namespace, shows the bench's directory ($0) as /tmp of the image's root
# ($1) and runs the rest chrooted there as the image's user: one process throughout (each step
# execs the next), so its schedstat is the agent's CPU plus this wrapper's.
_IN_IMAGE = (
    'mount --bind "$0" "$1"/tmp && root="$1" && shift'
    ' && exec {chroot} --userspec={user} "$root" "$@"'
)


def host_tool(name: str) -> str:
    """A host program by its full path: the agent's environment has the image's PATH."""
    found = shutil.which(name, path=os.defpath + ":/usr/sbin:/sbin")
    if found is None:
        raise SystemExit(f"--image-root needs {name} on the host")
    return found


def in_image(root: str, work: Path, *command: str) -> list[str]:
    """`command` run in the image's root file system, as the image runs it."""
    script = _IN_IMAGE.format(chroot=host_tool("chroot"), user=IMAGE_USER)
    return [
        host_tool("unshare"),
        "--mount",
        host_tool("sh"),
        "-c",
        script,
        str(work),
        root,
        *command,
    ]


# The agent's imports before its first request, in a fresh interpreter: what they cost, which
# standard-library modules they load, and how many frozen dataclasses (each compiles its methods
# at import) and value objects (`domain.value_objects`) they define.
_PROBE = """
import time
started = time.process_time()
import sys
before = set(sys.modules)
import brupop.cli.main, brupop.entrypoints.agent.main, brupop.adapters.apiserver_client
done = time.process_time()
import json
ours = [m for name, m in list(sys.modules.items()) if name.startswith("brupop") and m]
classes = [v for m in ours for v in vars(m).values()
    if isinstance(v, type) and v.__module__ == m.__name__]
standard = [m for m in sys.modules if m not in before and not m.startswith("brupop")
    and m not in ("typing.io", "typing.re")]
print(json.dumps({"start": started, "imports": done - started, "ours": len(ours),
    "dataclasses": sum("__dataclass_params__" in vars(c) for c in classes),
    "value_objects": sum("__value_fields__" in vars(c) for c in classes),
    "standard": standard}))
"""
# Each standard-library module the agent loads, imported alone in that order: its own cost.
_FLOOR = """
import importlib, json, sys, time
costs = {}
for name in sys.argv[1:]:
    began = time.process_time()
    importlib.import_module(name)
    costs[name] = time.process_time() - began
print(json.dumps(costs))
"""


def probe(python: str) -> dict[str, Any]:
    """One fresh interpreter importing what the agent imports before its first request."""
    answer = subprocess.run(
        [python, "-c", _PROBE], capture_output=True, text=True, check=True, cwd="/"
    )
    result: dict[str, Any] = json.loads(answer.stdout)
    return result


def floor(python: str, modules: list[str]) -> dict[str, float]:
    """Each of `modules` imported alone, in order, in one fresh interpreter: CPU ms each."""
    answer = subprocess.run(
        [python, "-c", _FLOOR, *modules], capture_output=True, text=True, check=True, cwd="/"
    )
    return {name: cost * 1000 for name, cost in json.loads(answer.stdout).items()}


def breakdown(python: str, runs: int) -> dict[str, Any]:
    """Where the CPU to the first request goes: the interpreter's start, the standard library
    the agent loads (per module, medians), brupop's own modules."""
    probes = [probe(python) for _ in range(runs)]
    modules = probes[0]["standard"]
    floors = [floor(python, modules) for _ in range(runs)]
    per_module = {name: statistics.median(f[name] for f in floors) for name in modules}
    standard = statistics.median(sum(f.values()) for f in floors)
    imports = statistics.median(p["imports"] for p in probes) * 1000
    by_package: dict[str, float] = {}
    for name, cost in per_module.items():  # _ssl with ssl, json.decoder with json
        package = name.split(".")[0]
        package = package if package.endswith("__") else package.lstrip("_")
        by_package[package] = by_package.get(package, 0.0) + cost
    top = sorted(by_package.items(), key=lambda item: -item[1])[:15]
    # What `site` costs (the venv's site-packages and .pth files): -S skips it, -I isolates.
    flags = {
        label: round(statistics.median(bare_start_ms(python, *given) for _ in range(runs)), 1)
        for label, given in (("plain", ()), ("-I", ("-I",)), ("-S", ("-S",)))
    }
    return {
        "runs": runs,
        "interpreter_start_ms": round(statistics.median(p["start"] for p in probes) * 1000, 1),
        "bare_interpreter_ms_by_flags": flags,
        "imports_ms": round(imports, 1),
        "standard_library_alone_ms": round(standard, 1),
        "standard_library_modules": len(modules),
        "brupop_modules": probes[0]["ours"],
        "brupop_modules_ms": round(imports - standard, 1),
        "frozen_dataclasses": probes[0]["dataclasses"],
        "value_objects": probes[0]["value_objects"],
        "largest_standard_packages_ms": {name: round(cost, 1) for name, cost in top},
    }


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "median_ms": round(statistics.median(ordered), 1),
        "min_ms": round(ordered[0], 1),
        "max_ms": round(ordered[-1], 1),
    }


def interleaved(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """This tree's agent and the one in `args.before`, one run of each in turn, each with its
    source on PYTHONPATH: the two series see the same load, which moves CPU time by tens of %."""
    tls = write_loopback_tls(work / "tls")
    stand_in = StandIn(tls)
    base = agent_env(stand_in.url, tls, work)
    trees = {"before": args.before, "after": args.after}
    envs = {label: base | {"PYTHONPATH": src} for label, src in trees.items()}
    command = [args.python, "-m", "brupop", "agent"]
    seen: dict[str, list[float]] = {label: [] for label in trees}
    load_at_start = os.getloadavg()[0]
    try:
        log = work / "agent.log"
        for env in envs.values():  # warm the page cache and write each tree's bytecode
            one_agent(command, env, stand_in, log)
        for run in range(args.runs):
            for label, env in envs.items():
                cpu = one_agent(command, env, stand_in, log).request_cpu_ms
                seen[label].append(cpu if cpu is not None else float("nan"))
            progress(
                f"run {run + 1}/{args.runs}: "
                + ", ".join(f"{label} {values[-1]:.1f} ms" for label, values in seen.items())
            )
    finally:
        stand_in.close()
    return {
        "benchmark": "agent_start_interleaved",
        "machine": machine(),
        "load_average_1min_at_end": round(os.getloadavg()[0], 2),
        "load_average_1min_at_start": round(load_at_start, 2),
        "python": args.python,
        "runs_each": args.runs,
        "before_tree": args.before_name,
        "agent_cpu_to_first_request": {label: summary(v) for label, v in seen.items()},
        "after_minus_before_median_ms": round(
            statistics.median(seen["after"]) - statistics.median(seen["before"]), 1
        ),
        "after_minus_before_paired_median_ms": round(
            statistics.median(a - b for a, b in zip(seen["after"], seen["before"], strict=True)), 1
        ),
    }


def image_env(url: str, tls: TlsFiles, work: Path) -> dict[str, str]:
    """The image's environment and a DaemonSet pod's, with the bench's files as the image sees
    them; everything readable by the image's user."""
    env = agent_env(url, tls, work)
    env.pop("PYTHONPATH", None)
    for path in [work, *work.rglob("*")]:
        path.chmod(0o777 if path.is_dir() else 0o644)
    inside = {
        "AGENT_TOKEN_PATH": f"{IMAGE_WORK}/token",
        "AGENT_CA_PATH": f"{IMAGE_WORK}/{tls.ca_cert.relative_to(work)}",
        "TERMINATION_LOG": f"{IMAGE_WORK}/termination-log",
    }
    return env | IMAGE_ENV | inside


def measure_image(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """The agent as its image runs it: CPU to the first request, the image's bare interpreter
    and the wrapper alone, all through the same wrapper."""
    work.chmod(0o777)
    tls = write_loopback_tls(work / "tls")
    stand_in = StandIn(tls)
    env = image_env(stand_in.url, tls, work)
    command = in_image(args.image_root, work, "/opt/brupop/bin/brupop", "agent")
    bare = in_image(args.image_root, work, "/opt/brupop/bin/python", "-c", "pass")
    wrapper = [host_tool("unshare"), "--mount", host_tool("sh"), "-c"]
    wrapper += [
        f'mount --bind "$0" "$1"/tmp && exec {host_tool("true")}',
        str(work),
        args.image_root,
    ]
    try:
        log = work / "agent.log"
        one_agent(command, env, stand_in, log)  # warm the page cache
        firsts, bares, wrappers = [], [], []
        for run in range(args.runs):
            firsts.append(one_agent(command, env, stand_in, log))
            bares.append(exit_cpu_ms(bare))
            wrappers.append(exit_cpu_ms(wrapper))
            progress(f"run {run + 1}/{args.runs}: {firsts[-1].request_cpu_ms:.1f} ms")
    finally:
        stand_in.close()
    to_request = [f.request_cpu_ms for f in firsts if f.request_cpu_ms is not None]
    median = statistics.median(to_request)
    wrapped = statistics.median(wrappers)
    return {
        "benchmark": "agent_start_image",
        "machine": machine(),
        "how": "the image's root, read-only, chrooted as its user, its entry script and env",
        "runs": args.runs,
        "first_request": firsts[0].request_line,
        "agent_cpu_to_first_request_with_wrapper": summary(to_request),
        "bare_interpreter_cpu_with_wrapper": summary(bares),
        "wrapper_alone_cpu": summary(wrappers),
        "agent_cpu_to_first_request_less_wrapper_median_ms": round(median - wrapped, 1),
        "agent_peak_rss_at_first_request_mib": round(
            statistics.median(f.peak_rss_mib for f in firsts if f.peak_rss_mib is not None), 1
        ),
        "goal_ms": GOAL_MS,
        "met": median - wrapped <= GOAL_MS,
    }


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    tls = write_loopback_tls(work / "tls")
    stand_in = StandIn(tls)
    env = agent_env(stand_in.url, tls, work)
    command = [args.python, "-m", "brupop", "agent"]
    try:
        log = work / "agent.log"
        one_agent(command, env, stand_in, log)  # warm the page cache and the venv's bytecode
        firsts, bares = [], []
        for run in range(args.runs):
            firsts.append(one_agent(command, env, stand_in, log))
            bares.append(bare_start_ms(args.python))
            progress(f"run {run + 1}/{args.runs}: {firsts[-1].request_cpu_ms:.1f} ms")
    finally:
        stand_in.close()
    to_request = [f.request_cpu_ms for f in firsts if f.request_cpu_ms is not None]
    to_connect = [f.connect_cpu_ms for f in firsts if f.connect_cpu_ms is not None]
    rss = [f.peak_rss_mib for f in firsts if f.peak_rss_mib is not None]
    median = statistics.median(to_request)
    return {
        "benchmark": "agent_start",
        "machine": machine(),
        "python": args.python,
        "runs": args.runs,
        "first_request": firsts[0].request_line,
        "agent_cpu_to_first_request": summary(to_request),
        "agent_cpu_to_first_connection": summary(to_connect),
        "bare_interpreter_cpu": summary(bares),
        "agent_peak_rss_at_first_request_mib": round(statistics.median(rss), 1),
        "breakdown": breakdown(args.python, args.breakdown_runs),
        "goal_ms": GOAL_MS,
        "met": median <= GOAL_MS,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=21, help="cold starts measured (default 21)")
    parser.add_argument(
        "--python", default=sys.executable, help="the interpreter that runs `-m brupop agent`"
    )
    parser.add_argument(
        "--breakdown-runs", type=int, default=7, help="runs of the breakdown (default 7)"
    )
    parser.add_argument(
        "--before",
        metavar="SRC",
        help="another tree's src directory, measured interleaved with this one (no breakdown)",
    )
    parser.add_argument(
        "--before-name",
        default="another tree",
        help="what the --before tree is, for the JSON (a commit, say): no machine path",
    )
    parser.add_argument(
        "--after",
        metavar="SRC",
        default=str(Path(__file__).resolve().parents[1] / "src"),
        help="the src directory measured against --before (default: this checkout's)",
    )
    parser.add_argument(
        "--image-root",
        metavar="DIR",
        help="the agent image's root file system (`podman image mount`): run the agent as the"
        " image does (root; no breakdown)",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="brupop-bench-agent-start-"))
    try:
        if args.image_root:
            result = measure_image(args, work)
        else:
            result = interleaved(args, work) if args.before else measure(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
