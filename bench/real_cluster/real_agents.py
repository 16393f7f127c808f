"""A handful of real `brupop agent` processes with the host emulator, on kwok nodes of their
own, beside the generator: their requests (the apiserver's counters less the generator's own)
show whether the generator asks what real agents ask."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from brupop.simulation.fleet.agent_env import agent_argv, default_apiclient
from real_cluster.fleet import NAMESPACE, FleetNode

VERSION = "1.0.0"  # current and target: the host has no update, so these agents stay Idle


def agent_environment(
    node: FleetNode, url: str, ca: Path, folder: Path, apiclient: Path, target: str = VERSION
) -> dict[str, str]:
    """`node`'s agent environment: its token in `folder`, its emulated host in `folder`/host
    at VERSION, offering `target` (VERSION: no update)."""
    (folder / "host").mkdir(parents=True, exist_ok=True)
    token = folder / "token"
    token.write_text(node.token)
    env = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    env.update(
        {
            "MY_NODE_NAME": node.name,
            "APISERVER_URL": url,
            "AGENT_TOKEN_PATH": str(token),
            "AGENT_CA_PATH": str(ca),
            "APICLIENT_PATH": str(apiclient),
            "BRUPOP_NAMESPACE": NAMESPACE,
            "LOGGING_FORMATTER": "json",
            "TERMINATION_LOG": str(folder / "termination-log"),
            "PYTHONUNBUFFERED": "1",
            "BRUPOP_SIM_HOST_DIR": str(folder / "host"),
            "BRUPOP_SIM_CURRENT_VERSION": VERSION,
            "BRUPOP_SIM_TARGET_VERSION": target,
            "BRUPOP_SIM_NODE_NAME": node.name,
        }
    )
    return env


def start_real_agents(
    nodes: list[FleetNode], urls: list[str], ca: Path, work: Path
) -> list[subprocess.Popen[bytes]]:
    apiclient = default_apiclient(work)
    started = []
    for index, node in enumerate(nodes):
        folder = work / "real-agents" / node.name
        env = agent_environment(node, urls[index % len(urls)], ca, folder, apiclient)
        with (folder / "agent.log").open("wb") as log:
            started.append(
                subprocess.Popen(agent_argv(), env=env, stdout=log, stderr=subprocess.STDOUT)
            )
    return started


def stop_real_agents(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
