"""brupop's controller replicas and apiserver replicas as real processes (`python -m brupop
controller|apiserver`) over the control plane, each with its chart ServiceAccount's
TokenRequest token in a kubeconfig of its own, so kube-apiserver (and its audit log) tells
the controller from the apiserver. They run in a venv of the runtime packages only, as the
control image holds them (`runtime_python.py`)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from brupop.simulation.fleet.certificates import TlsFiles
from brupop.simulation.fleet.real_cluster.backend import free_loopback_port
from brupop.simulation.fleet.real_cluster.connection import ClusterAccess
from real_cluster.fleet import NAMESPACE
from real_cluster.runtime_python import runtime_python

CONTROLLER_ACCOUNT = "brupop-controller-service-account"
APISERVER_ACCOUNT = "brupop-apiserver-service-account"
TOKEN_SECONDS = 12 * 3600


@dataclass
class BrupopProcess:
    """One running brupop process: what it is, its pid, its port, its log."""

    name: str
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def pid(self) -> int:
        return self.process.pid


@dataclass
class BrupopProcesses:
    """Everything this rig started, stopped in reverse order."""

    controllers: list[BrupopProcess] = field(default_factory=list)
    apiservers: list[BrupopProcess] = field(default_factory=list)

    def stop(self) -> None:
        for each in reversed(self.controllers + self.apiservers):
            if each.process.poll() is None:
                each.process.send_signal(signal.SIGTERM)
        for each in self.controllers + self.apiservers:
            try:
                each.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                each.process.kill()
                each.process.wait()


def service_account_kubeconfig(access: ClusterAccess, account: str, path: Path) -> Path:
    """A kubeconfig holding a TokenRequest token of `account` (the API server's audience)."""
    token = access.token(NAMESPACE, account, {"expirationSeconds": TOKEN_SECONDS})
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "bench",
                "cluster": {"server": access.host, "certificate-authority": access.ca_file},
            }
        ],
        "users": [{"name": account, "user": {"token": token}}],
        "contexts": [{"name": "bench", "context": {"cluster": "bench", "user": account}}],
        "current-context": "bench",
    }
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


def _environment(kubeconfig: Path, extra: dict[str, str]) -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "PYTHONPATH")
    env = {key: os.environ[key] for key in keep if key in os.environ}
    env.update(
        {
            "KUBECONFIG": str(kubeconfig),
            "BRUPOP_NAMESPACE": NAMESPACE,
            "BRUPOP_CLUSTER": "kubernetes",
            "LOGGING_FORMATTER": "json",
            "PYTHONUNBUFFERED": "1",
            # As the chart runs them: without docstrings (and asserts), 15 MiB less each.
            "PYTHONOPTIMIZE": "2",
        }
    )
    env.update(extra)
    return env


def _start(name: str, command: str, env: dict[str, str], port: int, logs: Path) -> BrupopProcess:
    log = logs / f"{name}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["nice", "-n", "5", str(runtime_python()), "-m", "brupop", command],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    return BrupopProcess(name, process, port, log)


def start_apiservers(
    access: ClusterAccess,
    tls: TlsFiles,
    count: int,
    work: Path,
    extra_env: dict[str, str] | None = None,
) -> list[BrupopProcess]:
    kubeconfig = service_account_kubeconfig(access, APISERVER_ACCOUNT, work / "apiserver.kcfg")
    started = []
    for index in range(count):
        port = free_loopback_port()
        env = _environment(
            kubeconfig,
            {
                "APISERVER_INTERNAL_PORT": str(port),
                "APISERVER_BIND_ADDRESS": "127.0.0.1",
                "APISERVER_TLS_CERT_PATH": str(tls.cert),
                "APISERVER_TLS_KEY_PATH": str(tls.key),
                "APISERVER_MAX_CONNECTIONS": "65536",
                "TERMINATION_LOG": str(work / f"apiserver-{index}.termination"),
                **(extra_env or {}),
            },
        )
        started.append(_start(f"apiserver-{index}", "apiserver", env, port, work))
    return started


def start_controllers(
    access: ClusterAccess, count: int, work: Path, extra_env: dict[str, str] | None = None
) -> list[BrupopProcess]:
    """The controller replicas; the concurrency limit comes from the `default` policy;
    `extra_env` adds or overrides settings (e.g. TRACING_FILTER_DIRECTIVE)."""
    kubeconfig = service_account_kubeconfig(access, CONTROLLER_ACCOUNT, work / "controller.kcfg")
    started = []
    for index in range(count):
        port = free_loopback_port()
        env = _environment(
            kubeconfig,
            {
                "MY_NODE_NAME": f"controller-host-{index}",
                "CONTROLLER_METRICS_PORT": str(port),
                "CONTROLLER_BIND_ADDRESS": "127.0.0.1",
                **(extra_env or {}),
            },
        )
        started.append(_start(f"controller-{index}", "controller", env, port, work))
    return started


def wait_listening(processes: list[BrupopProcess], seconds: float = 60.0) -> None:
    """Until each process accepts TCP on its port; RuntimeError (with its log's tail) if one
    exits or is not listening in time."""

    deadline = time.monotonic() + seconds
    for each in processes:
        while True:
            if each.process.poll() is not None:
                tail = each.log.read_text()[-2000:]
                raise RuntimeError(f"{each.name} exited {each.process.returncode}:\n{tail}")
            try:
                socket.create_connection(("127.0.0.1", each.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{each.name} not listening after {seconds} s") from None
                time.sleep(0.3)
