"""CommandResult: one finished host command, and questions about it that never raise.

The seed of this project: a reboot kills `apiclient` with SIGTERM. That result has no exit code
and an empty stderr; asking it anything must not crash the agent.
"""

from __future__ import annotations

import re
import signal as _signal

from brupop.domain.value_objects import value_object

_HTTP_STATUS = re.compile(r"\bStatus\s+([1-5]\d\d)\b")
HTTP_LOCKED = 423


@value_object
class CommandResult:
    """A finished process: argv, exit code or terminating signal, output, duration."""

    argv: tuple[str, ...]
    exit_code: int | None
    signal: int | None
    stdout: str
    stderr: str
    duration_seconds: float

    @classmethod
    def from_returncode(
        cls,
        argv: tuple[str, ...] | list[str],
        returncode: int,
        stdout: bytes | str,
        stderr: bytes | str,
        duration_seconds: float,
    ) -> CommandResult:
        """Build from a POSIX return code (negative means killed by that signal)."""
        exit_code, signal = (None, -returncode) if returncode < 0 else (returncode, None)
        return cls(
            argv=tuple(argv),
            exit_code=exit_code,
            signal=signal,
            stdout=_text(stdout),
            stderr=_text(stderr),
            duration_seconds=duration_seconds,
        )

    def succeeded(self) -> bool:
        """Exited by itself with code 0."""
        return self.signal is None and self.exit_code == 0

    def killed_by_signal(self) -> bool:
        """Ended by a signal rather than by exiting."""
        return self.signal is not None

    def signal_name(self) -> str | None:
        """`SIGTERM` and the like, or None when not killed by a signal."""
        return None if self.signal is None else signal_name(self.signal)

    def http_status(self) -> int | None:
        """The HTTP status `apiclient` reported in stderr (`Status 423 when ...`), if any."""
        match = _HTTP_STATUS.search(self.stderr)
        return int(match.group(1)) if match else None

    def update_lock_held(self) -> bool:
        """The host refused because another update command holds its lock (HTTP 423)."""
        return not self.succeeded() and self.http_status() == HTTP_LOCKED

    def describe(self) -> str:
        """One short line for logs: how it ended and the first line of stderr."""
        how = (
            f"killed by {self.signal_name()}"
            if self.killed_by_signal()
            else f"exit code {self.exit_code}"
        )
        first_line = self.stderr.strip().splitlines()[0][:200] if self.stderr.strip() else ""
        return f"{' '.join(self.argv)}: {how}" + (f": {first_line}" if first_line else "")


def signal_name(number: int) -> str:
    """`SIGTERM` for 15, and `signal 99` for a number with no name."""
    try:
        return _signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _text(data: bytes | str) -> str:
    return data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
