"""The `fleet` flags of `brupop simulate`: how many nodes, the versions, the limit, the host
emulator, and the fleet's shape (zones, workload pods); defined and read here.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from brupop.cli.fleet_description.flag_values import OptionError, read_integer, read_node
from brupop.cli.fleet_description.fleet_shape import (
    MAX_PODS_PER_NODE,
    MAX_ZONES,
    FleetShape,
    parse_pod_counts,
    parse_zones,
)
from brupop.cli.near_miss import did_you_mean
from brupop.domain.versions import compare_versions, is_version

UNLIMITED = "unlimited"


def add_fleet_flags(parser: argparse.ArgumentParser) -> None:
    fleet = parser.add_argument_group("fleet")
    fleet.add_argument("--nodes", default="6", help="opted-in nodes to simulate (default 6)")
    fleet.add_argument(
        "--max-concurrent",
        default="1",
        help="nodes allowed outside Idle at once: an integer >= 1 or 'unlimited' (default 1)",
    )
    fleet.add_argument("--from-version", default="1.19.0", help="version every node starts on")
    fleet.add_argument("--to-version", default="1.20.0", help="version the hosts are offered")
    fleet.add_argument(
        "--apiclient",
        default=None,
        help="executable the agents call as apiclient (default: the bundled host emulator)",
    )
    fleet.add_argument(
        "--zones",
        default=None,
        metavar="N",
        help=f"label the nodes topology.kubernetes.io/zone zone-a, zone-b, ... round robin "
        f"(1..{MAX_ZONES}; default: no zone label)",
    )
    fleet.add_argument(
        "--pods-per-node",
        default=None,
        metavar="SPEC",
        help=f"workload pods (ReplicaSet, 100m CPU and 128Mi each) per node instead of the "
        f"standard web and cache pods, e.g. node-01=0,default=4 (0..{MAX_PODS_PER_NODE} each; "
        f"default 0 for nodes not named)",
    )


def read_versions(args: argparse.Namespace) -> tuple[str, str]:
    """--from-version and --to-version, the second newer than the first."""
    from_version = _version("--from-version", args.from_version)
    to_version = _version("--to-version", args.to_version)
    if compare_versions(to_version, from_version) <= 0:
        raise OptionError(
            f"--to-version: {to_version} must be newer than --from-version {from_version}"
        )
    return from_version, to_version


def read_max_concurrent(raw: str) -> int | None:
    """--max-concurrent: a count, or None for unlimited."""
    word = raw.strip().lower()
    if word == UNLIMITED:
        return None
    if not word.lstrip("-").isdigit():
        raise OptionError(
            f"--max-concurrent: {raw!r} is neither an integer >= 1 nor {UNLIMITED!r}"
            f"{did_you_mean(word, [UNLIMITED])}"
        )
    return read_integer("--max-concurrent", raw, minimum=1, maximum=1_000_000)


def read_executable(flag: str, raw: str | None) -> Path | None:
    if raw is None:
        return None
    path = Path(raw).expanduser().resolve()
    if not path.is_file() or not os.access(path, os.X_OK):
        raise OptionError(f"{flag}: {raw} is not an executable file")
    return path


def read_shape(args: argparse.Namespace, names: list[str]) -> FleetShape:
    """--zones, --pods-per-node and --do-not-disrupt-pod (a scenario flag) as one FleetShape."""
    zones, pods = parse_zones(args.zones), parse_pod_counts(args.pods_per_node, names)
    keep = (read_node("--do-not-disrupt-pod", name, names) for name in args.do_not_disrupt_pod)
    return FleetShape(zones, pods, tuple(dict.fromkeys(keep)))


def _version(flag: str, raw: str) -> str:
    if not is_version(raw):
        raise OptionError(f"{flag}: {raw!r} is not a semantic version like 1.20.0")
    return raw
