"""Flags of `brupop simulate` that do nothing without another: given alone, they stop the run
with one line saying what they need (exit 2), rather than a run that ends "OK" and hides that
the scenario asked for never happened."""

from __future__ import annotations

import argparse
from typing import Any

from brupop.cli.fleet_description.flag_values import OptionError


def check_flag_needs(args: argparse.Namespace, policy: dict[str, Any] | None) -> None:
    """OptionError naming the first flag given without the flag it needs."""
    spec = (policy or {}).get("spec") or {}
    if args.unhealthy and not spec.get("healthGate"):
        where = "the --policy has no spec.healthGate" if policy else "there is no --policy"
        raise OptionError(
            f"--unhealthy: has no effect without a health gate, and {where}: add "
            "`healthGate: {timeoutSeconds: 3}` to a --policy file's spec"
        )
    if args.chaos_seed is not None and args.chaos_kills.strip() in ("0", ""):
        raise OptionError("--chaos-seed: has no effect without --chaos-kills N (N >= 1)")
    if args.controller_down_seconds is not None and args.restart_controller_after is None:
        raise OptionError(
            "--controller-down-seconds: has no effect without --restart-controller-after SECONDS"
        )
