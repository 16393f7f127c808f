"""The argument parser of every `brupop` subcommand: argparse, with short errors.

argparse answers a bad flag with the whole usage block (40 lines for simulate) above its one
useful line. Here a bad flag prints that line, a suggestion when a word is a near miss of a
known flag or choice, and where the full usage is; the exit code stays 2.
"""

from __future__ import annotations

import argparse
import re
from typing import Any, NoReturn

from brupop.cli.near_miss import did_you_mean
from brupop.cli.program_name import command_name

_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<word>[^']*)' \(choose from (?P<known>.*)\)")
_UNRECOGNIZED = "unrecognized arguments: "


class CommandParser(argparse.ArgumentParser):
    """argparse.ArgumentParser whose errors are two lines: the error, and `see ... --help`;
    a `brupop X` prog is named as the CLI was called (`kubectl brupop X` under kubectl)."""

    def __init__(self, prog: str | None = None, **kwargs: Any) -> None:
        if prog is not None and prog.startswith("brupop "):
            prog = command_name(prog.removeprefix("brupop "))
        super().__init__(prog=prog, **kwargs)

    def error(self, message: str) -> NoReturn:
        line = f"{self.prog}: {message}{self._suggestion(message)}"
        self.exit(2, f"{line}\nsee `{self.prog} --help`\n")

    def _suggestion(self, message: str) -> str:
        choice = _INVALID_CHOICE.search(message)
        if choice is not None:
            known = re.findall(r"'([^']*)'", choice.group("known"))
            return did_you_mean(choice.group("word"), known)
        if message.startswith(_UNRECOGNIZED):
            flags = [word for word in message[len(_UNRECOGNIZED) :].split() if word[:1] == "-"]
            if flags:
                known = [option for action in self._actions for option in action.option_strings]
                return did_you_mean(flags[0].split("=", 1)[0], known)
        return ""
