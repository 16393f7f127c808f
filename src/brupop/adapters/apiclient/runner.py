"""Runs `apiclient` as a child process (no shell) with a timeout, and records what happened."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence

from brupop.domain.host.command_result import CommandResult
from brupop.ports.errors import HostUnavailableError

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:  # the protocol is for the type checker: nothing checks it at run time
    from typing import Protocol

    from brupop.ports.clock import Clock

    class CommandRunner(Protocol):
        """Run argv to completion within `timeout_seconds`; HostUnavailableError if not."""

        def __call__(self, argv: Sequence[str], timeout_seconds: float) -> CommandResult: ...


class SubprocessRunner:
    """The real runner: `subprocess.run`, killing a child that outlives its timeout."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock

    def __call__(self, argv: Sequence[str], timeout_seconds: float) -> CommandResult:
        started = self._clock.monotonic()
        try:
            completed = subprocess.run(
                list(argv),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout_seconds,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise HostUnavailableError(
                f"{' '.join(argv)}: no answer within {timeout_seconds:g} s; killed"
            ) from None
        except OSError as error:
            raise HostUnavailableError(f"{' '.join(argv)}: cannot run: {error}") from None
        return CommandResult.from_returncode(
            tuple(argv),
            completed.returncode,
            completed.stdout,
            completed.stderr,
            self._clock.monotonic() - started,
        )
