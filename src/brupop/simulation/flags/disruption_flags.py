"""The scenario flags of `brupop simulate` that disrupt a rollout: blocked drains, pods not to
disrupt, unhealthy nodes, host faults and kinds, agent kills and a controller restart; defined
and read here.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from brupop.cli.fleet_description.flag_values import (
    ONE_DAY,
    OptionError,
    read_integer,
    read_node,
    read_seconds,
)
from brupop.cli.near_miss import did_you_mean
from brupop.simulation.scenarios.host_faults import HOST_KINDS, KNOWN_FAULTS

LATE_HOST_SECONDS = 15.0
"""How late a --late-host answers its first call: as late as an agent's first report over a
real API server."""
LATE_HOST_MOST = 600.0  # later than that, a host is not late but dead


def add_disruption_flags(scenario: argparse._ArgumentGroup) -> None:
    """Added to the `scenarios` group, before the policy flags (the order --help shows)."""
    scenario.add_argument(
        "--block-drain",
        action="append",
        default=[],
        metavar="NODE",
        help="put a pod on NODE whose PodDisruptionBudget never allows its eviction",
    )
    scenario.add_argument(
        "--do-not-disrupt-pod",
        action="append",
        default=[],
        metavar="NODE",
        help='run a pod annotated karpenter.sh/do-not-disrupt: "true" on NODE',
    )
    scenario.add_argument(
        "--unhealthy",
        action="append",
        default=[],
        metavar="NODE",
        help="after its reboot NODE stays NotReady and its DaemonSet pod never becomes Ready "
        "(needs a --policy with a healthGate, which then fails it)",
    )
    scenario.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="NODE=FAULT",
        help=f"make NODE's host emulator misbehave; FAULT is one of {', '.join(KNOWN_FAULTS)}",
    )
    scenario.add_argument(
        "--host-kind",
        action="append",
        default=[],
        metavar="NODE=KIND",
        help=f"make NODE's host one of the kinds {', '.join(HOST_KINDS)}: locked down (updates "
        "still work), a variant without in-place updates, an end-of-life variant never "
        "offered more, a host answering as no Bottlerocket does, a FIPS host, or a FIPS host "
        "that boots in the standard mode after its update",
    )
    scenario.add_argument(
        "--late-host",
        action="append",
        default=[],
        metavar="NODE[=SECONDS]",
        help=f"NODE's host answers its first call SECONDS late (default {LATE_HOST_SECONDS:g}), "
        "so its agent's first report is as late",
    )
    scenario.add_argument(
        "--chaos-kills", default="0", help="kill agents (SIGKILL or SIGTERM) this many times"
    )
    scenario.add_argument(
        "--chaos-seed", default=None, help="seed for the chaos schedule (needs --chaos-kills)"
    )
    scenario.add_argument(
        "--restart-controller-after",
        default=None,
        metavar="SECONDS",
        help="stop the controller this long after the first node starts updating, "
        "then start a new one",
    )
    scenario.add_argument(
        "--controller-down-seconds",
        default=None,
        help="how long the controller stays stopped (default 1; needs --restart-controller-after)",
    )


def read_fault(text: str, names: list[str]) -> tuple[str, str]:
    """One `--fault NODE=FAULT`."""
    return _node_and_choice("--fault", "FAULT", text, names, KNOWN_FAULTS)


def read_host_kind(text: str, names: list[str]) -> tuple[str, str]:
    """One `--host-kind NODE=KIND`."""
    return _node_and_choice("--host-kind", "KIND", text, names, HOST_KINDS)


def _node_and_choice(
    flag: str, word: str, text: str, names: list[str], choices: Sequence[str]
) -> tuple[str, str]:
    """`NODE=CHOICE` for `flag`: a known node and one of `choices`."""
    node, sep, choice = text.partition("=")
    if not sep:
        raise OptionError(f"{flag}: {text!r} is not NODE={word}")
    if choice not in choices:
        raise OptionError(
            f"{flag}: {choice!r} is not one of {', '.join(choices)}{did_you_mean(choice, choices)}"
        )
    return read_node(flag, node, names), choice


def read_late_host(text: str, names: list[str]) -> tuple[str, float]:
    """One `--late-host NODE[=SECONDS]`."""
    node, sep, seconds = text.partition("=")
    delay = read_seconds("--late-host", seconds, most=LATE_HOST_MOST) if sep else LATE_HOST_SECONDS
    return read_node("--late-host", node, names), delay


def read_chaos_seed(raw: str | None) -> int | None:
    if raw is None:
        return None
    return read_integer("--chaos-seed", raw, minimum=0, maximum=2**63)


def read_restart_after(raw: str | None) -> float | None:
    """--restart-controller-after; None: the controller runs the whole rollout."""
    if raw is None:
        return None
    return read_seconds("--restart-controller-after", raw, most=ONE_DAY)
