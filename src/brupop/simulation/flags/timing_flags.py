"""The timing flags of `brupop simulate`: the compressed intervals (one per setting, see timing)
and --settle-seconds, when a quiet fleet counts as done; defined and read here.
"""

from __future__ import annotations

import argparse

from brupop.cli.fleet_description.flag_values import OptionError, read_seconds
from brupop.simulation.flags.setting_checks import TimingFlagError, check_timing
from brupop.simulation.flags.timing import TIMING_FLAGS, Timing


def add_settle_flag(scenario: argparse._ArgumentGroup) -> None:
    """Added last to the `scenarios` group (the order --help shows)."""
    scenario.add_argument(
        "--settle-seconds",
        default="3",
        help="end once no node has changed state for this long and none is updating",
    )


def add_timing_flags(parser: argparse.ArgumentParser) -> None:
    timing = parser.add_argument_group("timing (seconds; defaults compress the original's)")
    for flag in TIMING_FLAGS:
        timing.add_argument(
            f"--{flag.name}", default=None, help=f"{flag.help} (default {flag.default:g})"
        )


def read_timing(args: argparse.Namespace) -> Timing:
    """The timing flags, each finite and bounded, obeying the rules of the settings they feed."""
    given = {
        flag.name: read_seconds(f"--{flag.name}", raw, allow_zero=flag.allow_zero, most=flag.most)
        for flag in TIMING_FLAGS
        if (raw := getattr(args, flag.name.replace("-", "_"))) is not None
    }
    timing = Timing.from_flags(given)
    if timing["restart-backoff"] > timing["restart-backoff-max"]:
        raise OptionError("--restart-backoff: must not exceed --restart-backoff-max")
    try:
        check_timing(timing)
    except TimingFlagError as error:
        raise OptionError(str(error)) from None
    return timing
