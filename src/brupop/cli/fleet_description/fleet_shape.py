"""The shape of a simulated fleet: its zones, the workload pods on each node, and the pods an
autoscaler must not disrupt (`--zones`, `--pods-per-node`, `--do-not-disrupt-pod`).

Checked here, once, before anything starts; a bad value raises OptionError naming its flag.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass

from brupop.cli.fleet_description.flag_values import OptionError, read_integer

ZONE_LABEL = "topology.kubernetes.io/zone"
MAX_ZONES = 26  # zone-a .. zone-z
MAX_PODS_PER_NODE = 50
DEFAULT_KEY = "default"
_SPEC_MAX_CHARS = 20_000  # room for an entry per node of the largest fleet


@dataclass(frozen=True)
class PodCounts:
    """`--pods-per-node`: the nodes named, and what every other node runs (`default`)."""

    named: tuple[tuple[str, int], ...] = ()
    default: int = 0

    def on(self, node: str) -> int:
        """The workload pods `node` runs."""
        return dict(self.named).get(node, self.default)


@dataclass(frozen=True)
class FleetShape:
    """How the fleet is laid out beyond its node count."""

    zones: int | None = None  # None: no zone label
    pods: PodCounts | None = None  # None: the standard web and cache workloads
    do_not_disrupt: tuple[str, ...] = ()  # nodes running a karpenter.sh/do-not-disrupt pod

    def zone_of(self, index: int) -> str | None:
        """The zone of the node at `index` (0-based): zone-a, zone-b, ... round robin."""
        if self.zones is None:
            return None
        return f"zone-{string.ascii_lowercase[index % self.zones]}"


def parse_zones(raw: str | None) -> int | None:
    """`--zones N`: 1..26 zones, or None when the flag is not given."""
    return None if raw is None else read_integer("--zones", raw, minimum=1, maximum=MAX_ZONES)


def parse_pod_counts(raw: str | None, names: Sequence[str]) -> PodCounts | None:
    """`--pods-per-node NODE=COUNT,...,default=COUNT`; a node not named runs `default` (0 when
    it is not given either)."""
    if raw is None:
        return None
    if len(raw) > _SPEC_MAX_CHARS:
        raise OptionError(f"--pods-per-node: longer than {_SPEC_MAX_CHARS} characters")
    known = set(names)
    counts: dict[str, int] = {}
    for entry in raw.split(","):
        key, sep, value = (part.strip() for part in entry.partition("="))
        if not sep or not key:
            raise OptionError(f"--pods-per-node: {entry.strip()!r} is not NODE=COUNT")
        if key != DEFAULT_KEY and key not in known:
            raise OptionError(
                f"--pods-per-node: no node {key!r} in this fleet ({names[0]}..{names[-1]})"
            )
        if key in counts:
            raise OptionError(f"--pods-per-node: {key!r} is given twice")
        counts[key] = _count(value, key)
    default = counts.pop(DEFAULT_KEY, 0)
    return PodCounts(tuple(sorted(counts.items())), default)


def _count(value: str, key: str) -> int:
    try:
        count = int(value)
    except ValueError:
        raise OptionError(f"--pods-per-node: {key}={value!r} is not a whole number") from None
    if not 0 <= count <= MAX_PODS_PER_NODE:
        raise OptionError(f"--pods-per-node: {key}={count} is outside 0..{MAX_PODS_PER_NODE}")
    return count
