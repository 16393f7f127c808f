"""A fleet on the Kubernetes API emulator, and brupop's processes pointed at it by a kubeconfig.

What a cluster administrator and the kubelet would provide, written straight into the
emulator: opted-in Nodes, a DaemonSet-owned agent pod per node with its projected token, and a
ReplicaSet's pods behind a budget for every drain to evict. The apiserver and controller run
as `brupop apiserver` / `brupop controller` processes with BRUPOP_CLUSTER=kubernetes, so every
cluster call they make crosses the wire to the emulator.
"""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from brupop.cli.fleet_description.nodes import SimulatedNode
from brupop.domain.cluster.objects import COMPONENT_LABEL
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE
from brupop.services.apiserver.authorization.authorizer import AGENT_SERVICE_ACCOUNT
from tests.support.kube_emulator import KubeEmulator
from tests.support.polling import wait_until

NAMESPACE = "brupop-bottlerocket-aws"
WORKLOADS = "default"
AGENT_DAEMONSET = "brupop-agent"
WEB = "web-5d8f7"
_STOP_SECONDS = 10.0


def fleet_files(names: list[str], work_dir: Path) -> list[SimulatedNode]:
    """Each node's agent pod, token file and emulated host's directory under `work_dir`."""
    return [
        SimulatedNode(
            name=name,
            agent_pod=f"{AGENT_DAEMONSET}-{name}",
            token_path=work_dir / "nodes" / name / "token",
            host_dir=work_dir / "nodes" / name / "host",
        )
        for name in names
    ]


def add_fleet(emulator: KubeEmulator, names: list[str], work_dir: Path) -> list[SimulatedNode]:
    """Nodes, agent pods with their tokens, and one evictable web pod per node."""
    fleet = fleet_files(names, work_dir)
    for node in fleet:
        _add_node(emulator, node)
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": WEB, "uid": f"uid-{WEB}"}
    for index, name in enumerate(names):
        emulator.add_pod(
            WORKLOADS, f"{WEB}-{index}", name, labels={"app": "web"},
            owners=[owner | {"controller": True}],
        )  # fmt: skip
    emulator.add_disruption_budget(WORKLOADS, "web", {"app": "web"}, max_unavailable=1)
    return fleet


def web_pod(index: int) -> str:
    return f"{WEB}-{index}"


def _add_node(emulator: KubeEmulator, node: SimulatedNode) -> None:
    name = node.name
    emulator.add_node(name, labels={OPT_IN_LABEL: OPT_IN_VALUE, "kubernetes.io/hostname": name})
    daemonset = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "name": AGENT_DAEMONSET,
        "uid": f"uid-{AGENT_DAEMONSET}",
        "controller": True,
    }
    emulator.add_pod(
        NAMESPACE, node.agent_pod, name, labels={COMPONENT_LABEL: "agent"}, owners=[daemonset],
        service_account=AGENT_SERVICE_ACCOUNT,
    )  # fmt: skip
    node.host_dir.mkdir(parents=True, exist_ok=True)
    node.token_path.write_text(emulator.issue_token(NAMESPACE, node.agent_pod))


def write_kubeconfig(path: Path, server_url: str) -> Path:
    """A kubeconfig whose current context is the emulator (JSON is valid YAML)."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "emulator", "cluster": {"server": server_url}}],
        "users": [{"name": "brupop", "user": {"token": "emulator-accepts-any-token"}}],
        "contexts": [{"name": "emulator", "context": {"cluster": "emulator", "user": "brupop"}}],
        "current-context": "emulator",
    }
    path.write_text(json.dumps(config))
    return path


def cluster_env(kubeconfig: Path, settings: Mapping[str, str]) -> dict[str, str]:
    """The environment of a cluster-side process: the kubeconfig, never an in-cluster config."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("KUBERNETES_")}
    env.update(
        {
            "BRUPOP_CLUSTER": "kubernetes",
            "BRUPOP_NAMESPACE": NAMESPACE,
            "KUBECONFIG": str(kubeconfig),
            "LOGGING_FORMATTER": "json",
            "PYTHONUNBUFFERED": "1",
        }
    )
    env.update(settings)
    return env


@dataclass
class BrupopProcess:
    """One `brupop <command>` process, its output in a log file."""

    command: str
    process: subprocess.Popen[bytes]
    log_path: Path

    @classmethod
    def start(cls, command: str, env: Mapping[str, str], log_path: Path) -> BrupopProcess:
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "brupop", command],
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        return cls(command, process, log_path)

    def stop(self) -> int:
        """SIGTERM, as a kubelet stops a container; its exit code."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(_STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(_STOP_SECONDS)
        return self.process.returncode

    def tail(self, lines: int = 30) -> str:
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        return f"--- {self.command}\n" + "\n".join(text.splitlines()[-lines:])


def wait_for_ping(base_url: str, ca_path: Path, process: BrupopProcess, seconds: float) -> None:
    """Until the apiserver answers /ping (it lists the shadows first); fails if it exits."""
    context = ssl.create_default_context(cafile=str(ca_path))

    def answered() -> bool:
        if process.process.poll() is not None:
            raise AssertionError("the apiserver exited")
        try:
            with urllib.request.urlopen(f"{base_url}/ping", context=context, timeout=2) as reply:
                return int(reply.status) == 200
        except OSError:
            return False

    try:
        wait_until(answered, "the apiserver's answer to /ping", seconds=seconds, interval=0.1)
    except AssertionError as late:
        raise AssertionError(f"{late}\n{process.tail()}") from None
