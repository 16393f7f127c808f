"""Running the `go` command: at low priority, statically linked, with the local toolchain,
its output appended to a build log, and one progress line per step."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class BuildError(Exception):
    """A go command failed; the message carries the tail of its output."""


def go_available() -> bool:
    return shutil.which("go") is not None


def go_environment() -> dict[str, str]:
    """The caller's environment with a static build and no toolchain switching."""
    env = dict(os.environ)
    env["CGO_ENABLED"] = "0"
    env.setdefault("GOTOOLCHAIN", "local")
    return env


def log_tail(path: Path, lines: int = 20) -> str:
    if not path.exists():
        return "(no log)"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


@dataclass
class Progress:
    """Prints one line per finished step, with its own and the total elapsed seconds."""

    started: float = field(default_factory=time.monotonic)

    @contextmanager
    def step(self, what: str) -> Iterator[None]:
        began = time.monotonic()
        yield
        now = time.monotonic()
        print(f"[{now - self.started:6.0f}s] {what} ({now - began:.0f} s)", flush=True)

    def elapsed(self) -> float:
        return time.monotonic() - self.started


@dataclass(frozen=True)
class Go:
    """The go command, run in a module folder, logging to `log`."""

    log: Path

    def run(self, cwd: Path, *args: str, env: dict[str, str] | None = None) -> None:
        command = ["nice", "-n", "19", "go", *args]
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("a") as out:
            out.write(f"\n$ (cd {cwd} && {' '.join(command)})\n")
            out.flush()
            done = subprocess.run(
                command, cwd=cwd, env=env or go_environment(), stdout=out, stderr=out
            )
        if done.returncode != 0:
            raise BuildError(f"go {' '.join(args)} failed:\n{log_tail(self.log)}")

    def module_info(self, cwd: Path, module: str) -> dict[str, Any]:
        """`go mod download -json module@version`: where its go.mod and source landed."""
        done = subprocess.run(
            ["go", "mod", "download", "-json", module],
            cwd=cwd,
            env=go_environment(),
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise BuildError(f"go mod download {module} failed:\n{done.stdout}{done.stderr}")
        info: dict[str, Any] = json.loads(done.stdout)
        return info

    def edit_json(self, cwd: Path, gomod: Path) -> dict[str, Any]:
        """`go mod edit -json` of any go.mod file, parsed."""
        done = subprocess.run(
            ["go", "mod", "edit", "-json", str(gomod)],
            cwd=cwd,
            env=go_environment(),
            capture_output=True,
            text=True,
            check=True,
        )
        parsed: dict[str, Any] = json.loads(done.stdout)
        return parsed
