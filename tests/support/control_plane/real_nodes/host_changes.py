"""The host changes a real-node cluster makes, written down before each is made so that `down`
undoes exactly those, in reverse, even after a crash half-way through `up`."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

COMMAND_SECONDS = 30.0


class HostCommandError(Exception):
    """A host command (ip, iptables, sysctl) failed; the message is its stderr's last line."""


def run(argv: list[str], check: bool = True) -> str:
    """Run a host command; its stdout, or HostCommandError naming the command and the cause."""
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=COMMAND_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise HostCommandError(f"{' '.join(argv)}: {error}") from error
    if check and done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise HostCommandError(f"{' '.join(argv)}: {last}")
    return done.stdout


@dataclass(frozen=True)
class Journal:
    """DIR/real-nodes/host-changes.json: a list of [kind, detail...] in the order made."""

    path: Path

    def entries(self) -> list[list[str]]:
        if not self.path.is_file():
            return []
        loaded = json.loads(self.path.read_text())
        return [[str(part) for part in entry] for entry in loaded]

    def add(self, *entry: str) -> None:
        entries = self.entries()
        if list(entry) not in entries:
            entries.append(list(entry))
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(entries, indent=1) + "\n")

    def forget(self) -> None:
        self.path.unlink(missing_ok=True)


def sysctl_path(name: str) -> Path:
    return Path("/proc/sys") / name.replace(".", "/")


def read_sysctl(name: str) -> str:
    return sysctl_path(name).read_text().strip()


def write_sysctl(name: str, value: str) -> None:
    sysctl_path(name).write_text(value + "\n")


def set_sysctl(journal: Journal, name: str, value: str) -> None:
    """Record the value found (once), then set the new one."""
    if not any(entry[:2] == ["sysctl", name] for entry in journal.entries()):
        journal.add("sysctl", name, read_sysctl(name))
    write_sysctl(name, value)


def make_folder(journal: Journal, path: Path) -> None:
    """mkdir a host folder a runtime hard-codes (a mount point in each node's namespace),
    recorded only when it did not exist, so `down` removes only what `up` made."""
    if path.exists():
        return
    journal.add("folder", str(path))
    path.mkdir(parents=True)
