"""Real `brupop agent` processes whose emulated hosts offer an update, started again after each
emulated reboot (the host emulator ends its agent, as a reboot ends the agent's container), as
the kubelet starts a rebooted node's agent pod: the agents of a real rollout on kwok Nodes."""

from __future__ import annotations

import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from brupop.simulation.fleet.agent_env import agent_argv, default_apiclient
from real_cluster.fleet import FleetNode
from real_cluster.real_agents import agent_environment, stop_real_agents

TARGET = "1.1.0"  # the version every host offers; each starts at real_agents.VERSION


@dataclass
class RebootingAgents:
    """One agent per node, each started again `reboot_seconds` after it exits, until stop()."""

    nodes: list[FleetNode]
    urls: list[str]
    ca: Path
    work: Path
    reboot_seconds: float
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    starts: dict[str, int] = field(default_factory=dict)
    _envs: dict[str, dict[str, str]] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        apiclient = default_apiclient(self.work)
        for index, node in enumerate(self.nodes):
            folder = self._folder(node.name)
            url = self.urls[index % len(self.urls)]
            self._envs[node.name] = agent_environment(node, url, self.ca, folder, apiclient, TARGET)
            self._launch(node.name)
        self._thread = threading.Thread(target=self._restart_exited, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        stop_real_agents(list(self.processes.values()))

    def _folder(self, name: str) -> Path:
        return self.work / "rollout-agents" / name

    def _launch(self, name: str) -> None:
        self.starts[name] = self.starts.get(name, 0) + 1
        with (self._folder(name) / f"agent-{self.starts[name]}.log").open("wb") as log:
            self.processes[name] = subprocess.Popen(
                agent_argv(), env=self._envs[name], stdout=log, stderr=subprocess.STDOUT
            )

    def _restart_exited(self) -> None:
        exited_at: dict[str, float] = {}
        while not self._stop.wait(0.2):
            for name, process in list(self.processes.items()):
                if process.poll() is None:
                    continue
                since = exited_at.setdefault(name, time.monotonic())
                if time.monotonic() - since >= self.reboot_seconds:
                    del exited_at[name]
                    self._launch(name)
