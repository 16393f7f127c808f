#!/usr/bin/env python3
"""What a resync by versions costs the controller's watch thread on a real control plane: with
`--nodes` kwok Nodes and their shadows, the process first holds both lists decoded (the heap of
a controller's mirrors), then lists the names and resourceVersions of every shadow and opted-in
Node, as the informers' resync does, `--runs` times, and reads the CPU of the listing thread.

Variants, one run of each in turn so that they see the same load:
- `now`: the adapters as they are (each page decoded against a schema of the two strings it
  needs, `version_pages.read_version_page`);
- `parsed_whole`: each page parsed whole into dicts and the two strings taken from them, as
  before (the collector paused for the page, as now).

Earlier variants (the collector on mid-list, gzip) are in the results this bench wrote before.

Prints one JSON object and keeps it in bench/results/real_cluster_resync_<N>.json.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_cluster.fleet import NAMESPACE
from real_cluster.session import Session, control_plane_down, control_plane_up
from rig import emit, machine

from brupop.adapters.kubernetes.api import watching
from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.domain.cluster.objects import VersionListing
from brupop.services.controller.mirrors.fleet_mirror import OPT_IN_SELECTOR

RESULTS = Path(__file__).resolve().parent / "results"


def _parsed_whole(calls: Any, source: Any, params: dict[str, Any], items: list[Any]) -> Any:
    """A page read as before: parsed whole into dicts, then each item's name and version."""
    answer = calls.json(source.action, source.list_method, *source.args, **params)
    for raw in answer.get("items") or []:
        meta = raw.get("metadata") or {}
        if meta.get("name"):
            items.append((str(meta["name"]), watching._version_of(raw)))
    meta = answer.get("metadata") or {}
    return meta.get("continue"), str(meta.get("resourceVersion") or "")


@contextmanager
def variant(name: str) -> Iterator[None]:
    """The adapters changed as `name` says, for the duration."""
    reader = watching._read_version_page
    if name == "parsed_whole":
        watching._read_version_page = _parsed_whole
    try:
        yield
    finally:
        watching._read_version_page = reader


def measure(nodes: int, runs: int, work: Path) -> dict[str, Any]:
    cp = work / "control-plane"
    kubeconfig = control_plane_up(cp)
    try:
        session = Session.open(kubeconfig, work)
        session.install_chart()
        session.build_fleet(nodes, 0, batch=1000, threads=16)
        cluster = KubernetesCluster(session.access.admin, NAMESPACE)
        held = (cluster.shadows.list(), cluster.nodes.list(OPT_IN_SELECTOR))
        lists: dict[str, Callable[[], VersionListing]] = {
            "shadows": lambda: cluster.shadows.list_versions(),
            "nodes": lambda: cluster.nodes.list_versions(OPT_IN_SELECTOR),
        }
        cpu: dict[str, dict[str, list[float]]] = {}
        load_at_start = machine()["load_average_1min_at_start"]
        for _ in range(runs):
            for name in ("now", "parsed_whole"):
                with variant(name):
                    for kind, listing in lists.items():
                        began = time.thread_time()
                        listed = listing()
                        spent = (time.thread_time() - began) * 1000
                        assert len(listed.versions) == nodes, (kind, len(listed.versions))
                        cpu.setdefault(name, {}).setdefault(kind, []).append(spent)
        del held
    finally:
        control_plane_down(cp)
    medians = {
        name: {kind: round(statistics.median(v), 1) for kind, v in kinds.items()}
        for name, kinds in cpu.items()
    }
    return {
        "benchmark": "real_cluster_resync",
        "nodes": nodes,
        "machine": machine() | {"load_average_1min_at_start": load_at_start},
        "runs_each": runs,
        "cpu_ms_median": medians,
        "cpu_ms_both_kinds_median": {
            name: round(sum(kinds.values()), 1) for name, kinds in medians.items()
        },
        "cpu_ms": {
            n: {k: [round(x, 1) for x in v] for k, v in ks.items()} for n, ks in cpu.items()
        },
        "goal": "a full resync at 10,000 nodes at most 500 ms of CPU",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=7, help="lists of each kind per variant")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="brupop-resync-") as folder:
        result = measure(args.nodes, args.runs, Path(folder))
    emit(result, RESULTS / f"real_cluster_resync_{args.nodes}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
