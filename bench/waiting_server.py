"""`brupop apiserver` itself over an in-memory cluster of `--nodes` agents, whose shadows the bench
changes on command; used by apiserver_waiting.py.

As in apiserver_main_process.py only the cluster is swapped (its own in-memory TokenReview, which
costs nothing), so settings, limits and server are what a pod runs. Once about to serve it writes
`ready.json` into `--work`. Each line on stdin is a command: `one I` writes a new spec to node I's
shadow, `all` to every shadow, one after another (a rollout wave); for each command one JSON line
on stdout says which resourceVersion each written shadow got and when (time.monotonic(), which
every process on the machine shares). With `--profile` each `all` is sampled for PROFILE_SECONDS
(waiting_profile.py). On SIGTERM it stops as in a pod.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

from apiserver_main_process import prepare_loopback_apiserver
from dependency_injector import providers
from ready_file import publish_ready
from rig import NAMESPACE, add_agent_nodes
from waiting_profile import Sampler

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.shadow import ShadowSpec, shadow_name
from brupop.domain.states import UpdateState
from brupop.entrypoints.apiserver.container import ApiserverContainer
from brupop.entrypoints.apiserver.main import main as apiserver_main

STATES = (UpdateState.STAGED_AND_PERFORMED_UPDATE, UpdateState.IDLE)
PROFILE_SECONDS = 4.0  # how long after the first write of a burst its answers are sampled


class ShadowWriter:
    """Writes new specs to the cluster's shadows, as the controller would, and says when."""

    def __init__(
        self, cluster: InMemoryCluster, names: list[str], profile: Path | None = None
    ) -> None:
        self._cluster = cluster
        self._names = names
        self._writes = 0
        self._profile = profile
        self._sampler = Sampler() if profile else None

    def write(self, indexes: list[int]) -> dict[str, list[object]]:
        """For each written shadow: [resourceVersion, monotonic time of the write]."""
        self._writes += 1
        spec = ShadowSpec(state=STATES[self._writes % 2], version=f"1.{self._writes}.0")
        written: dict[str, list[object]] = {}
        for index in indexes:
            name = shadow_name(self._names[index])
            at = time.monotonic()
            shadow = self._cluster.shadows.replace_spec(name, spec, None)
            written[self._names[index]] = [shadow.resource_version, at]
        return written

    def serve_commands(self) -> None:
        """Read commands from stdin until it closes; answer each with one JSON line."""
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            every = words[0] == "all"
            if every and self._sampler is not None:
                self._sampler.start()
                threading.Timer(PROFILE_SECONDS, self._profiled).start()
            indexes = list(range(len(self._names))) if every else [int(words[1])]
            sys.stdout.write(json.dumps(self.write(indexes)) + "\n")
            sys.stdout.flush()

    def _profiled(self) -> None:
        """The burst is answered: stop sampling, and write where its time went so far."""
        assert self._sampler is not None and self._profile is not None
        self._sampler.stop()
        self._profile.write_text(json.dumps(self._sampler.report(), indent=1) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description="brupop apiserver whose shadows change on cue")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--nodes", type=int, required=True)
    parser.add_argument("--max-connections", type=int, required=True)
    parser.add_argument("--profile", type=Path, help="sample each burst; write the profile here")
    args = parser.parse_args()
    cluster = InMemoryCluster(NAMESPACE)
    names = [f"node-{index:05d}" for index in range(args.nodes)]
    nodes = add_agent_nodes(cluster, names, args.work / "tokens")
    for node in nodes:
        cluster.shadows.create(node.name, node.uid)
    ApiserverContainer.cluster.override(providers.Object(cluster))
    # Every token stays reviewed for the whole run: this bench measures waiting, not the
    # TokenReviews of a fleet whose cached reviews all expire at once.
    port, tls = prepare_loopback_apiserver(
        args.work,
        {
            "APISERVER_MAX_CONNECTIONS": str(args.max_connections),
            "TOKEN_REVIEW_CACHE_SECONDS": "3600",
        },
    )
    writer = ShadowWriter(cluster, names, args.profile)
    threading.Thread(target=writer.serve_commands, name="bench-commands", daemon=True).start()
    publish_ready(args.work, nodes, url=f"https://127.0.0.1:{port}", port=port, ca=str(tls.ca_cert))
    return apiserver_main([])


if __name__ == "__main__":
    sys.exit(main())
