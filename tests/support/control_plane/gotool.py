"""Running the `go` command: at low priority, statically linked, with the local toolchain,
its output appended to a build log, a network error retried with backoff, and one progress line
per step."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from tests.support.control_plane.go_errors import BuildError, GoError, NetworkGaveUp, headline

__all__ = ["BuildError", "Go", "Progress"]

T = TypeVar("T")
RETRIES = 3  # after the first try: a module-proxy hiccup rarely lasts a minute
FIRST_WAIT_SECONDS = 10.0  # then doubled: 10, 20, 40 s
OUTPUT_TAIL_BYTES = 64 * 1024


def go_environment() -> dict[str, str]:
    """The caller's environment with a static build and no toolchain switching."""
    env = dict(os.environ)
    env["CGO_ENABLED"] = "0"
    env.setdefault("GOTOOLCHAIN", "local")
    return env


def is_network_error(error: BaseException) -> bool:
    return isinstance(error, GoError) and error.transient


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
    """The go command, run in a module folder, logging to `log`; a network error is retried
    `RETRIES` times, waiting `first_wait_seconds`, then twice as long each time."""

    log: Path
    first_wait_seconds: float = FIRST_WAIT_SECONDS

    def run(self, cwd: Path, *args: str) -> None:
        self.retried(lambda: self.run_once(cwd, args))

    def module_info(self, cwd: Path, module: str) -> dict[str, Any]:
        """`go mod download -json module@version`: where its go.mod and source landed."""
        output = self.retried(lambda: self.captured(cwd, ("mod", "download", "-json", module)))
        info: dict[str, Any] = json.loads(output)
        return info

    def edit_json(self, cwd: Path, gomod: Path) -> dict[str, Any]:
        """`go mod edit -json` of any go.mod file, parsed."""
        parsed: dict[str, Any] = json.loads(
            self.captured(cwd, ("mod", "edit", "-json", str(gomod)))
        )
        return parsed

    def retried(self, attempt: Callable[[], T]) -> T:
        """`attempt()`, again after a network error, at most `RETRIES` more times."""
        retrying = Retrying(
            retry=retry_if_exception(is_network_error),
            stop=stop_after_attempt(RETRIES + 1),
            wait=wait_exponential(multiplier=self.first_wait_seconds),
            before_sleep=announce_retry,
            reraise=True,
        )
        try:
            return retrying(attempt)
        except GoError as error:
            if error.transient:
                raise NetworkGaveUp(error, RETRIES) from None
            raise

    def run_once(self, cwd: Path, args: tuple[str, ...]) -> None:
        """One go command, its output appended to the log."""
        command = ["go", *args]
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("a") as out:
            out.write(f"\n$ (cd {cwd} && {' '.join(command)})\n")
            out.flush()
            start = out.tell()
            done = subprocess.run(command, cwd=cwd, env=go_environment(), stdout=out, stderr=out)
        if done.returncode != 0:
            raise GoError(args, output_since(self.log, start), self.log)

    def captured(self, cwd: Path, args: tuple[str, ...]) -> str:
        """One go command whose standard output is its answer."""
        done = subprocess.run(
            ["go", *args], cwd=cwd, env=go_environment(), capture_output=True, text=True
        )
        if done.returncode != 0:
            self.log.parent.mkdir(parents=True, exist_ok=True)
            with self.log.open("a") as out:
                out.write(f"\n$ (cd {cwd} && go {' '.join(args)})\n{done.stdout}{done.stderr}")
            raise GoError(args, done.stdout + done.stderr, self.log)
        return done.stdout


def output_since(log: Path, start: int) -> str:
    """What the log gained after `start`: at most its last `OUTPUT_TAIL_BYTES`."""
    with log.open("rb") as read:
        read.seek(max(start, read.seek(0, os.SEEK_END) - OUTPUT_TAIL_BYTES))
        return read.read().decode(errors="replace")


def announce_retry(state: RetryCallState) -> None:
    """One line before each wait: which command, what went wrong, which retry, how long."""
    error = state.outcome.exception() if state.outcome else None
    if not isinstance(error, GoError):
        return
    wait = state.next_action.sleep if state.next_action else 0.0
    print(
        f"control-plane build: `{error.command}` hit a network error ({headline(error.output)});"
        f" retry {state.attempt_number} of {RETRIES} in {wait:.0f} s",
        flush=True,
    )
