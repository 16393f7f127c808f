"""An emulated Bottlerocket host for contract tests: a state directory plus an `apiclient`
wrapper script that runs the real emulator (a separate process) with this host's environment.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from brupop.adapters.apiclient.update_api import ApiclientUpdateApi
from brupop.adapters.system.clock import SystemClock
from brupop.hostsim import control

# Durations small enough to keep the suite fast, large enough to see the lock held.
FAST_HOST = {
    "BRUPOP_SIM_REFRESH_SECONDS": "0.05",
    "BRUPOP_SIM_PREPARE_SECONDS": "0.1",
    "BRUPOP_SIM_ACTIVATE_SECONDS": "0.05",
}
FAST_ADAPTER: dict[str, Any] = {
    "timeout_seconds": 10.0,
    "rate_period_seconds": 0.001,
    "rate_burst": 2,
    "retries": 3,
    "retry_base_seconds": 0.01,
    "retry_max_seconds": 0.05,
    "poll_interval_seconds": 0.02,
    "command_deadline_seconds": 10.0,
}


def emulator_command() -> list[str]:
    """The installed console script next to this interpreter, else `python -m brupop.hostsim`."""
    script = Path(sys.executable).parent / "brupop-host-emulator"
    return [str(script)] if script.exists() else [sys.executable, "-m", "brupop.hostsim"]


class EmulatedHost:
    """One host: `apiclient` is the path to give the adapter; `env` is its environment."""

    def __init__(self, root: Path, *, current: str = "1.0.0", offered: str | None = None) -> None:
        self.dir = root / "host"
        self.apiclient = root / "apiclient"
        self.env: dict[str, str] = {
            "BRUPOP_SIM_HOST_DIR": str(self.dir),
            "BRUPOP_SIM_CURRENT_VERSION": current,
            "BRUPOP_SIM_NODE_NAME": "node-under-test",
            "BRUPOP_SIM_REBOOT_KILLS": "none",
            **FAST_HOST,
        }
        if offered:
            self.env["BRUPOP_SIM_TARGET_VERSION"] = offered
        self._write_script()

    def set_env(self, **variables: str | None) -> None:
        """Change the host's environment for the next calls (None removes a variable)."""
        for name, value in variables.items():
            if value is None:
                self.env.pop(name, None)
            else:
                self.env[name] = value
        self._write_script()

    def adapter(self, **overrides: Any) -> ApiclientUpdateApi:
        """The real adapter, pointed at this host, with fast timings."""
        settings = {**FAST_ADAPTER, **overrides}
        return ApiclientUpdateApi(SystemClock(), apiclient_path=str(self.apiclient), **settings)

    def raw(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        """Run the wrapper as the adapter would (argv without the program name)."""
        return subprocess.run(
            [str(self.apiclient), *args], capture_output=True, timeout=30, check=False
        )

    def offer(self, version: str | None) -> None:
        """Let the update repository offer `version` (seeding the host if it has no state)."""
        self._seed()
        control.offer_version(str(self.dir), version)

    def state(self) -> dict[str, Any]:
        """The raw state.json."""
        return dict(json.loads((self.dir / "state.json").read_text()))

    def report(self) -> dict[str, Any]:
        """What `brupop.hostsim.control.read_host` reports."""
        return control.read_host(str(self.dir))

    def _seed(self) -> None:
        control.seed_host(
            str(self.dir),
            node_name=self.env["BRUPOP_SIM_NODE_NAME"],
            current_version=self.env["BRUPOP_SIM_CURRENT_VERSION"],
            offered_version=self.env.get("BRUPOP_SIM_TARGET_VERSION"),
        )

    def _write_script(self) -> None:
        exports = "".join(
            f"export {name}={shlex.quote(value)}\n" for name, value in sorted(self.env.items())
        )
        command = " ".join(shlex.quote(part) for part in emulator_command())
        self.apiclient.write_text(f'#!/bin/sh\n{exports}exec {command} "$@"\n')
        os.chmod(self.apiclient, 0o755)
