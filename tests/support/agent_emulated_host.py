"""Drive the host emulator directly (as an operator would with `apiclient`) to set up a host."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.polling import wait_until

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
        answers: list[subprocess.CompletedProcess[str]] = []

        def answered() -> bool:
            answers.append(self.call("/updates/status"))
            return answers[-1].returncode == 0 or "Status 404" in answers[-1].stderr

        wait_until(answered, "the emulated host's update lock released", interval=0.02)
        if answers[-1].returncode != 0:
            return None
        status: dict[str, Any] = json.loads(answers[-1].stdout)
        return status

    def run(self, command: str) -> dict[str, Any]:
        """POST /actions/<command>-update(s) and wait until the host recorded its success."""
        uri = (
            f"/actions/{command}-updates" if command == "refresh" else f"/actions/{command}-update"
        )
        answer = self.call(uri, "POST")
        assert answer.returncode == 0, answer.stderr
        statuses: list[dict[str, Any] | None] = []

        def recorded() -> bool:
            statuses.append(self.update_status())
            return self._last_command(statuses[-1]).get("cmd_type") == command

        wait_until(recorded, f"the emulated host's finishing {command}", interval=0.02)
        status = statuses[-1]
        assert status is not None
        assert self._last_command(status)["cmd_status"] == "Success", status
        return status

    @staticmethod
    def _last_command(status: dict[str, Any] | None) -> dict[str, Any]:
        record: dict[str, Any] = (status or {}).get("most_recent_command") or {}
        return record

    def make_ready(self) -> None:
        """Refresh, prepare and activate the offered version: the host is Ready to reboot."""
        for command in ("refresh", "prepare", "activate"):
            status = self.run(command)
        assert status["update_state"] == "Ready", status
