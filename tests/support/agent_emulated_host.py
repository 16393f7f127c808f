"""Drive the host emulator directly (as an operator would with `apiclient`) to set up a host."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EMULATOR = str(Path(sys.executable).with_name("brupop-host-emulator"))


@dataclass(frozen=True)
class EmulatedHost:
    """One emulated host: its state directory and the environment the emulator reads."""

    directory: Path
    current_version: str = "1.0.0"
    offered_version: str | None = "1.1.0"
    reboot_kills: str = "parent-and-self"

    def env(self) -> dict[str, str]:
        """The BRUPOP_SIM_* variables of this host (an agent passes them on to apiclient)."""
        return {
            "BRUPOP_SIM_HOST_DIR": str(self.directory),
            "BRUPOP_SIM_CURRENT_VERSION": self.current_version,
            "BRUPOP_SIM_TARGET_VERSION": self.offered_version or "",
            "BRUPOP_SIM_REFRESH_SECONDS": "0",
            "BRUPOP_SIM_PREPARE_SECONDS": "0",
            "BRUPOP_SIM_ACTIVATE_SECONDS": "0",
            "BRUPOP_SIM_REBOOT_KILLS": self.reboot_kills,
        }

    def call(self, uri: str, method: str = "GET") -> subprocess.CompletedProcess[str]:
        """One `apiclient raw` call."""
        return subprocess.run(
            [EMULATOR, "raw", "-u", uri, "-m", method],
            env={"PATH": "/usr/bin:/bin", **self.env()},
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )

    def running_version(self) -> str:
        """`GET /os` version_id."""
        answer = self.call("/os")
        assert answer.returncode == 0, answer.stderr
        version: str = json.loads(answer.stdout)["version_id"]
        return version

    def update_status(self) -> dict[str, Any] | None:
        """`GET /updates/status`, None before the first command; waits while the lock is held."""
        for _ in range(200):
            answer = self.call("/updates/status")
            if answer.returncode == 0:
                status: dict[str, Any] = json.loads(answer.stdout)
                return status
            if "Status 404" in answer.stderr:
                return None
            time.sleep(0.02)
        raise AssertionError(f"the emulated host kept its update lock: {answer.stderr}")

    def run(self, command: str) -> dict[str, Any]:
        """POST /actions/<command>-update(s) and wait until the host recorded its success."""
        uri = (
            f"/actions/{command}-updates" if command == "refresh" else f"/actions/{command}-update"
        )
        answer = self.call(uri, "POST")
        assert answer.returncode == 0, answer.stderr
        for _ in range(200):
            status = self.update_status()
            record = (status or {}).get("most_recent_command") or {}
            if record.get("cmd_type") == command and status is not None:
                assert record["cmd_status"] == "Success", record
                return status
            time.sleep(0.02)
        raise AssertionError(f"the emulated host never finished {command}")

    def make_ready(self) -> None:
        """Refresh, prepare and activate the offered version: the host is Ready to reboot."""
        for command in ("refresh", "prepare", "activate"):
            status = self.run(command)
        assert status["update_state"] == "Ready", status
