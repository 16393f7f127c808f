"""Runs `apiclient` as a child process (no shell) within a timeout and a bound on its output, and
records what happened.

`subprocess.run` would read whatever the child writes until the timeout: a host answer of a few
hundred megabytes would take the agent past its 50 MiB. Its answers are a few KiB.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import time
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


OUTPUT_MAX_BYTES = 1024 * 1024  # each of stdout and stderr
_CHUNK_BYTES = 64 * 1024


class _OutputTooLongError(Exception):
    """The child wrote more than OUTPUT_MAX_BYTES to one of its pipes."""


class SubprocessRunner:
    """The real runner: a child killed when it outlives its timeout or writes too much."""

    def __init__(self, clock: Clock, *, output_max_bytes: int = OUTPUT_MAX_BYTES) -> None:
        self._clock = clock
        self._output_max_bytes = output_max_bytes

    def __call__(self, argv: Sequence[str], timeout_seconds: float) -> CommandResult:
        started = self._clock.monotonic()
        command = " ".join(argv)
        try:
            child = subprocess.Popen(
                list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        except OSError as error:
            raise HostUnavailableError(f"{command}: cannot run: {error}") from None
        deadline = time.monotonic() + timeout_seconds
        with child:  # its pipes closed, and the child reaped, however this ends
            try:
                stdout, stderr = self._outputs(child, deadline)
                returncode = child.wait(timeout=max(deadline - time.monotonic(), 0.001))
            except subprocess.TimeoutExpired:
                child.kill()
                raise HostUnavailableError(
                    f"{command}: no answer within {timeout_seconds:g} s; killed"
                ) from None
            except _OutputTooLongError:
                child.kill()
                raise HostUnavailableError(
                    f"{command}: wrote more than {self._output_max_bytes} bytes; killed"
                ) from None
            except BaseException:  # a signal's handler raised: leave no child behind
                child.kill()
                raise
        return CommandResult.from_returncode(
            tuple(argv), returncode, stdout, stderr, self._clock.monotonic() - started
        )

    def _outputs(self, child: subprocess.Popen[bytes], deadline: float) -> tuple[bytes, bytes]:
        """All the child's stdout and stderr, read together until both end."""
        pipes = (child.stdout.fileno(), child.stderr.fileno())  # type: ignore[union-attr]
        outputs = {pipe: bytearray() for pipe in pipes}
        with selectors.PollSelector() as selector:
            for pipe in pipes:
                selector.register(pipe, selectors.EVENT_READ)
            while selector.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise subprocess.TimeoutExpired(child.args, 0)
                for key, _ in selector.select(left):
                    chunk = os.read(key.fd, _CHUNK_BYTES)
                    if not chunk:
                        selector.unregister(key.fd)
                    outputs[key.fd] += chunk
                    if len(outputs[key.fd]) > self._output_max_bytes:
                        raise _OutputTooLongError
        return bytes(outputs[pipes[0]]), bytes(outputs[pipes[1]])
