"""A scripted stand-in for the apiclient process: answers per URI, recorded calls, FakeClock."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from brupop.domain.host.command_result import CommandResult
from brupop.domain.timestamps import format_rfc3339
from brupop.ports.errors import HostApiError
from tests.fakes.clock import FakeClock

Answer = CommandResult | HostApiError


def ok(body: str = "") -> CommandResult:
    """apiclient exited 0 with `body` on stdout."""
    return CommandResult(("apiclient",), 0, None, body + "\n" if body else "", "", 0.01)


def http_error(status: int, body: str = "") -> CommandResult:
    """apiclient exited 1 after an HTTP error, with its usual stderr line."""
    stderr = f"Failed GET request to '/x': Status {status} when GETing /x: {body}\n"
    return CommandResult(("apiclient",), 1, None, "", stderr, 0.01)


def killed(signal: int) -> CommandResult:
    """apiclient was killed by `signal`."""
    return CommandResult(("apiclient",), None, signal, "", "", 0.01)


def status_json(
    state: str = "Available",
    cmd_type: str | None = "refresh",
    cmd_status: str = "Success",
    at: datetime | None = None,
) -> str:
    """An update status body whose most recent command is `cmd_type` at `at`."""
    command: dict[str, Any] | None = None
    if cmd_type is not None:
        command = {
            "cmd_type": cmd_type,
            "cmd_status": cmd_status,
            "timestamp": format_rfc3339(at) if at else None,
            "exit_status": 0 if cmd_status == "Success" else 1,
            "stderr": "" if cmd_status == "Success" else "updog failed\n",
        }
    return json.dumps(
        {"update_state": state, "chosen_update": None, "most_recent_command": command}
    )


class ScriptedApiclient:
    """Runner whose answers per URI are queued; the last answer of a URI repeats."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.answers: dict[str, deque[Answer]] = {}
        self.calls: list[tuple[float, list[str]]] = []
        self.timeouts: list[float] = []

    def script(self, uri: str, *answers: Answer) -> None:
        """Queue `answers` for `uri`."""
        self.answers.setdefault(uri, deque()).extend(answers)

    def uris(self) -> list[str]:
        """The URIs called, in order."""
        return [argv[argv.index("-u") + 1] for _, argv in self.calls]

    def __call__(self, argv: Sequence[str], timeout_seconds: float) -> CommandResult:
        self.calls.append((self.clock.monotonic(), list(argv)))
        self.timeouts.append(timeout_seconds)
        queue = self.answers[argv[argv.index("-u") + 1]]
        answer = queue.popleft() if len(queue) > 1 else queue[0]
        self.clock.advance(0.01)
        if isinstance(answer, HostApiError):
            raise answer
        return answer
