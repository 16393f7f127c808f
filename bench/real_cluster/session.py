"""One bench run's moving parts: the control plane (started here, or given), the chart, the
fleet, brupop's processes, the generator processes and the real agents; and their stop."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from brupop.simulation.fleet.certificates import TlsFiles, write_loopback_tls
from brupop.simulation.fleet.real_cluster.connection import ClusterAccess, connect
from real_cluster import brupop_processes, fleet, real_agents

REPO = Path(__file__).resolve().parents[2]
AGENTS_PER_GENERATOR = 2500
AUDIT_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  userGroups: ["system:serviceaccounts:brupop-bottlerocket-aws"]
- level: None
"""


KWOK_NODE_LEASE_SECONDS = 3600  # renewed every 900 s: 11 requests a second at 10,000 Nodes


def control_plane_up(folder: Path) -> Path:
    """`scripts/control-plane up` with an audit policy for brupop's ServiceAccounts."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "audit-policy.yaml").write_text(AUDIT_POLICY)
    # No node lifecycle controller runs here, so long leases mark no Node NotReady; kwok's
    # heartbeats are not brupop's load (the audit log leaves them out either way).
    (folder / "kwok-node-lease-seconds").write_text(f"{KWOK_NODE_LEASE_SECONDS}\n")
    subprocess.run([str(REPO / "scripts" / "control-plane"), "up", str(folder)], check=True)
    return folder / "kubeconfig"


def control_plane_down(folder: Path) -> None:
    subprocess.run([str(REPO / "scripts" / "control-plane"), "down", str(folder)], check=False)


@dataclass
class Session:
    work: Path
    access: ClusterAccess
    tls: TlsFiles
    nodes: list[fleet.FleetNode] = field(default_factory=list)
    real_nodes: list[fleet.FleetNode] = field(default_factory=list)
    brupop: brupop_processes.BrupopProcesses = field(
        default_factory=brupop_processes.BrupopProcesses
    )
    generators: list[subprocess.Popen[bytes]] = field(default_factory=list)
    agents: list[subprocess.Popen[bytes]] = field(default_factory=list)
    setup_seconds: dict[str, float] = field(default_factory=dict)

    @classmethod
    def open(cls, kubeconfig: Path, work: Path) -> Session:
        return cls(work, connect(kubeconfig), write_loopback_tls(work / "tls"))

    @property
    def control(self) -> Path:
        return self.work / "control"

    @property
    def urls(self) -> list[str]:
        return [f"https://127.0.0.1:{p.port}" for p in self.brupop.apiservers]

    def install_chart(self) -> None:
        sys.path.insert(0, str(REPO))
        from tests.support.control_plane.chart_install import apply_chart

        apply_chart(self.access.admin)

    def build_fleet(self, count: int, real: int, batch: int, threads: int) -> None:
        builder = fleet.FleetBuilder(self.access, threads)
        began = time.monotonic()
        for first in range(0, count, batch):
            names = [fleet.node_name(i) for i in range(first, min(count, first + batch))]
            self.nodes += builder.build(names)
            print(f"fleet: {len(self.nodes)}/{count} nodes ({time.monotonic() - began:.0f} s)",
                  file=sys.stderr, flush=True)  # fmt: skip
        self.real_nodes = builder.build([f"bench-real-{i:02d}" for i in range(real)], shadows=False)
        self.setup_seconds["fleet"] = round(time.monotonic() - began, 1)
        fleet.save_fleet(self.work / "fleet.json", self.nodes)

    def write_policy(self, max_concurrent: int | str) -> None:
        """The `default` BottlerocketUpdatePolicy with this `maxConcurrent` (2, or "10%"; a count
        given as text, "2", is refused), the only policy brupop follows; its other fields keep
        the defaults of a policy object."""
        from kubernetes.client import CustomObjectsApi

        from brupop.adapters.kubernetes.resources.update_policies import PLURAL, VERSION
        from brupop.domain.shadow import API_GROUP

        body = {
            "apiVersion": f"{API_GROUP}/{VERSION}",
            "kind": "BottlerocketUpdatePolicy",
            "metadata": {"name": "default", "namespace": fleet.NAMESPACE},
            "spec": {"maxConcurrent": max_concurrent},
        }
        CustomObjectsApi(self.access.admin).create_namespaced_custom_object(
            API_GROUP, VERSION, fleet.NAMESPACE, PLURAL, body
        )

    def start_brupop(
        self, apiservers: int, controllers: int, controller_env: dict[str, str] | None = None
    ) -> None:
        began = time.monotonic()
        work = self.work / "brupop"
        work.mkdir(exist_ok=True)
        self.brupop.apiservers = brupop_processes.start_apiservers(
            self.access, self.tls, apiservers, work
        )
        self.brupop.controllers = brupop_processes.start_controllers(
            self.access, controllers, work, controller_env
        )
        brupop_processes.wait_listening(self.brupop.apiservers + self.brupop.controllers)
        self.setup_seconds["brupop_processes"] = round(time.monotonic() - began, 1)

    def start_agents(self, host_seconds: float, ready_seconds: float) -> None:
        """The generator processes, then the real agents; returns once every simulated agent
        has reported its status and is long-polling."""
        began = time.monotonic()
        self.control.mkdir(exist_ok=True)
        processes = max(1, math.ceil(len(self.nodes) / AGENTS_PER_GENERATOR))
        share = math.ceil(len(self.nodes) / processes)
        script = Path(__file__).resolve().parent / "agent_load.py"
        for first in range(0, len(self.nodes), share):
            command = [sys.executable, str(script), "--fleet", str(self.work / "fleet.json"),
                       "--first", str(first), "--count", str(min(share, len(self.nodes) - first)),
                       "--urls", ",".join(self.urls), "--ca", str(self.tls.ca_cert),
                       "--control", str(self.control), "--host-seconds", str(host_seconds),
                       "--out", str(self.work / f"load-{first}.json")]  # fmt: skip
            log = (self.work / f"load-{first}.log").open("wb")
            self.generators.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT))
        self.agents = real_agents.start_real_agents(
            self.real_nodes, self.urls, self.tls.ca_cert, self.work
        )
        while self.ready() < len(self.nodes):
            if any(g.poll() is not None for g in self.generators):
                raise RuntimeError(f"a generator exited; see {self.work}/load-*.log")
            if time.monotonic() - began > ready_seconds:
                raise RuntimeError(
                    f"{self.ready()} of {len(self.nodes)} agents ready after {ready_seconds} s"
                )
            time.sleep(1.0)
        self.setup_seconds["agents_connected"] = round(time.monotonic() - began, 1)

    def ready(self) -> int:
        return sum(int(p.read_text() or 0) for p in self.control.glob("ready-*"))

    def stop_agents(self) -> list[dict[str, object]]:
        """Stop the generators (their tallies) and the real agents."""
        (self.control / "stop").touch()
        tallies = []
        for generator in self.generators:
            generator.wait(timeout=120)
        for path in sorted(self.work.glob("load-*.json")):
            tallies.append(json.loads(path.read_text()))
        real_agents.stop_real_agents(self.agents)
        self.generators, self.agents = [], []
        return tallies

    def close(self) -> None:
        """Stop every process this session started, each stop tried whatever the one before
        it raised, so a failing run never leaves brupop running."""
        try:
            self._stop_generators()
        finally:
            try:
                real_agents.stop_real_agents(self.agents)
            finally:
                try:
                    self.brupop.stop()
                finally:
                    self.access.close()

    def _stop_generators(self) -> None:
        if not self.generators:
            return
        self.control.mkdir(exist_ok=True)
        (self.control / "stop").touch()
        for generator in self.generators:
            try:
                generator.wait(timeout=60)
            except subprocess.TimeoutExpired:
                generator.kill()
                generator.wait()
