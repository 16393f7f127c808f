"""Each simulated agent's command line and environment, as a DaemonSet pod spec would give them.

The agent reads the settings registry's names; the host emulator (or any apiclient honouring
its contract) reads BRUPOP_SIM_* from the environment it inherits from the agent.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

from brupop.adapters.system.shared_clock import CLOCK_FILE_ENV
from brupop.cli.fleet_description.nodes import SimulatedNode
from brupop.simulation.flags.options import SimulationOptions
from brupop.simulation.flags.timing import Component
from brupop.simulation.fleet.certificates import TlsFiles
from brupop.simulation.scenarios.host_faults import (
    FAULT_ENV,
    FIRST_ANSWER_DELAY_ENV,
    HOST_KIND_ENV,
)

EMULATOR_SCRIPT = "brupop-host-emulator"
_SIM_PREFIX = "BRUPOP_SIM_"


def agent_argv() -> list[str]:
    """`brupop agent`, run by this interpreter."""
    return [sys.executable, "-m", "brupop", "agent"]


def default_apiclient(work_dir: Path) -> Path:
    """The bundled host emulator: its console script, or a small launcher for it."""
    beside = Path(sys.executable).parent / EMULATOR_SCRIPT
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which(EMULATOR_SCRIPT)
    if found:
        return Path(found)
    launcher = work_dir / EMULATOR_SCRIPT
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m brupop.hostsim "$@"\n')
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
    return launcher


def agent_env(
    node: SimulatedNode,
    options: SimulationOptions,
    *,
    apiserver_url: str,
    tls: TlsFiles,
    apiclient: Path,
    namespace: str,
    base: Mapping[str, str] | None = None,
    clock_file: Path | None = None,
) -> dict[str, str]:
    """The environment of `node`'s agent (and so of the apiclient calls it makes)."""
    inherited = dict(os.environ if base is None else base)
    env = {key: value for key, value in inherited.items() if not key.startswith(_SIM_PREFIX)}
    step = _text(options.timing["host-step"])
    prepare = _text(options.timing["host-prepare"] or options.timing["host-step"])
    env.update(
        {
            "MY_NODE_NAME": node.name,
            "APISERVER_URL": apiserver_url,
            "AGENT_TOKEN_PATH": str(node.token_path),
            "AGENT_CA_PATH": str(tls.ca_cert),
            "APICLIENT_PATH": str(apiclient),
            "BRUPOP_NAMESPACE": namespace,
            "BRUPOP_CLUSTER": "memory",
            "LOGGING_FORMATTER": "json",
            "TRACING_FILTER_DIRECTIVE": "info",
            "TERMINATION_LOG": str(node.host_dir.parent / "termination-log"),
            "PYTHONUNBUFFERED": "1",
            "BRUPOP_SIM_HOST_DIR": str(node.host_dir),
            "BRUPOP_SIM_CURRENT_VERSION": options.from_version,
            "BRUPOP_SIM_TARGET_VERSION": options.to_version,
            "BRUPOP_SIM_NODE_NAME": node.name,
            "BRUPOP_SIM_REFRESH_SECONDS": step,
            "BRUPOP_SIM_PREPARE_SECONDS": prepare,
            "BRUPOP_SIM_ACTIVATE_SECONDS": step,
        }
    )
    if clock_file is not None:  # the run's shared clock (the agent's and its host's)
        env[CLOCK_FILE_ENV] = str(clock_file)
    env.update(options.timing.env_for(Component.AGENT))
    for faulty, fault in options.faults:
        if faulty == node.name:
            env.update(FAULT_ENV[fault])
    for node_name, kind in options.host_kinds:
        if node_name == node.name:
            env[HOST_KIND_ENV] = kind
    for late, seconds in options.late_hosts:
        if late == node.name:
            env[FIRST_ANSWER_DELAY_ENV] = _text(seconds)
    return env


def _text(value: float) -> str:
    return str(int(value)) if value == int(value) else repr(value)
