"""The `output` flags of `brupop simulate`: the report, the timeline picture, the logs, the
work directory, the time limit and the live view; defined and read here.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from brupop.cli.fleet_description.flag_values import OptionError
from brupop.simulation.flags.output_paths import PathRefused

_LIVE = {"auto": None, "on": True, "off": False}


def add_output_flags(parser: argparse.ArgumentParser) -> None:
    output = parser.add_argument_group("output")
    output.add_argument("--report", default=None, help="write a JSON report to this path")
    output.add_argument(
        "--timeline",
        default=None,
        metavar="FILE",
        help="draw the rollout's timeline (one row per node, nodes in flight below) to FILE, "
        ".svg or .png",
    )
    output.add_argument("--log-dir", default=None, help="one log file per agent in this directory")
    output.add_argument(
        "--work-dir",
        default=None,
        help="keep certificates, tokens and host state here (default: a temporary directory, "
        "removed after a successful run)",
    )
    output.add_argument("--timeout", default="120", help="give up after this many seconds")
    output.add_argument(
        "--live",
        choices=tuple(_LIVE),
        default="auto",
        help="live progress view: on a terminal (auto), always, or never",
    )


def read_output(check: Callable[[str], Path], raw: str | None) -> Path | None:
    """An output path (--report, --timeline, --log-dir, --work-dir), checked now; none when
    not asked for."""
    if not raw:
        return None
    try:
        return check(raw)
    except PathRefused as error:
        raise OptionError(str(error)) from None


def read_live(raw: str) -> bool | None:
    """--live: None lets the command decide (live view only on a terminal)."""
    return _LIVE[raw]
