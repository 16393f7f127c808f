"""The name the CLI goes by (`brupop`, or `kubectl brupop` as a kubectl plugin), so every
command's messages introduce it the way the user called it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_PROGRAM: ContextVar[str] = ContextVar("brupop_program", default="brupop")


def command_name(command: str) -> str:
    """`brupop status`, or `kubectl brupop status` under kubectl."""
    return f"{_PROGRAM.get()} {command}"


@contextmanager
def called_as(program: str) -> Iterator[None]:
    """Run a command under `program`'s name, then go back to the previous one."""
    token = _PROGRAM.set(program)
    try:
        yield
    finally:
        _PROGRAM.reset(token)
