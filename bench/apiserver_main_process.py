"""`brupop apiserver` itself (its `main`: settings, logging, limits, server) over an in-memory
cluster holding `--nodes` agents, with a TokenReview that takes `--review-latency-ms`; used by
apiserver_abuse.py.

Only the cluster is swapped: the container's cluster provider is overridden before `main` runs,
so everything else is what a pod runs. Once it is about to serve it writes `ready.json` (URL,
port, CA, each node's name, UID and token) into `--work`; its log goes to `apiserver.log` there.
On SIGTERM it stops as in a pod and prints one JSON object: the TokenReviews it made.

The cluster's status writes and pod GETs are counted (cluster_calls.py), and `--gone-pods N`
nodes more have had their agent pod deleted before the server starts: their tokens (in
ready.json's `gone_nodes`) still carry valid claims, as a signed token does once its pod is gone,
so only the apiserver's pod check refuses them.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cluster_calls import CallCounts, CountingPods, CountingShadows
from dependency_injector import providers
from ready_file import publish_ready
from rig import NAMESPACE, AgentNode, add_agent_nodes

from brupop.adapters.memory.cluster import AGENT_AUDIENCE, InMemoryCluster
from brupop.domain.cluster.objects import TokenIdentity
from brupop.entrypoints.apiserver.container import ApiserverContainer
from brupop.entrypoints.apiserver.main import main as apiserver_main
from brupop.ports.cluster.event_recorder import EventRecorder
from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.ports.cluster.shadow_repository import ShadowRepository
from brupop.ports.cluster.update_policy_repository import UpdatePolicyRepository
from brupop.ports.cluster.workload_replicas import WorkloadReplicas
from brupop.ports.tokens.token_reviewer import TokenReviewer
from brupop.ports.tokens.token_verifier import AgentPodSource, TokenVerifier
from brupop.simulation.fleet.certificates import TlsFiles, write_loopback_tls

if TYPE_CHECKING:  # not in the code before issue 29, which the bench also runs
    from brupop.ports.tokens.token_verifier import ServiceAccountSource


class SlowTokenReviewer:
    """A TokenReviewer that takes `latency_seconds` per review, as a busy cluster would."""

    def __init__(self, inner: TokenReviewer, latency_seconds: float) -> None:
        self._inner = inner
        self._latency = latency_seconds
        self._lock = threading.Lock()
        self.reviews = 0

    def review(self, token: str, audiences: tuple[str, ...]) -> TokenIdentity:
        with self._lock:
            self.reviews += 1
        time.sleep(self._latency)
        return self._inner.review(token, audiences)

    def load_keys(self) -> None:
        """As a TokenVerifier (local verification, the default): nothing to fetch."""

    def refresh_keys(self) -> None:
        """Nothing to fetch again either."""

    @property
    def keys_generation(self) -> int:
        return 0  # no key is ever withdrawn here


class SignedClaims:
    """Local verification's fake: the slow reviewer, except that a token whose pod was deleted
    keeps the claims it was issued with (the in-memory reviewer checks the pod, as TokenReview
    does; a signed token's claims cannot)."""

    def __init__(self, inner: SlowTokenReviewer, claims: dict[str, TokenIdentity]) -> None:
        self._inner = inner
        self._claims = claims

    def review(self, token: str, audiences: tuple[str, ...]) -> TokenIdentity:
        identity = self._inner.review(token, audiences)
        return self._claims.get(token, identity)

    def load_keys(self) -> None:
        self._inner.load_keys()

    def refresh_keys(self) -> None:
        self._inner.refresh_keys()

    @property
    def keys_generation(self) -> int:
        return self._inner.keys_generation


def delete_pods(cluster: InMemoryCluster, nodes: list[AgentNode]) -> dict[str, TokenIdentity]:
    """Delete the agent pods of `nodes`: their tokens' claims, taken while the pods lived."""
    claims = {}
    for node in nodes:
        token = node.token_path.read_text()
        claims[token] = cluster.token_reviewer.review(token, (AGENT_AUDIENCE,))
        cluster.pods.delete(cluster.namespace, node.pod)
    return claims


@dataclass(frozen=True)
class Cluster:
    """The apiserver's ports: the in-memory cluster's, with the slow reviewer."""

    shadows: ShadowRepository
    nodes: NodeRepository
    pods: PodRepository
    token_reviewer: TokenReviewer
    workloads: WorkloadReplicas
    policies: UpdatePolicyRepository
    events: EventRecorder
    token_verifier: TokenVerifier  # the same slow reviewer: each check costs the same
    agent_pods: AgentPodSource
    service_accounts: ServiceAccountSource | None  # None in the code before issue 29


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def prepare_loopback_apiserver(
    work: Path, extra: dict[str, str] | None = None
) -> tuple[int, TlsFiles]:
    """Settings for `brupop apiserver` over the in-memory cluster on a free loopback port with
    a throwaway certificate (and `extra`), and this process's stderr to `work/apiserver.log`."""
    tls = write_loopback_tls(work / "tls")
    port = free_port()
    os.environ.update(
        {
            "BRUPOP_CLUSTER": "memory",
            "BRUPOP_NAMESPACE": NAMESPACE,
            "APISERVER_INTERNAL_PORT": str(port),
            "APISERVER_BIND_ADDRESS": "127.0.0.1",
            "APISERVER_TLS_CERT_PATH": str(tls.cert),
            "APISERVER_TLS_KEY_PATH": str(tls.key),
            "LOGGING_FORMATTER": "json",
            **(extra or {}),
        }
    )
    log = (work / "apiserver.log").open("ab", buffering=0)
    os.dup2(log.fileno(), 2)
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115 - for the process's life
    return port, tls


def main() -> int:
    parser = argparse.ArgumentParser(description="run brupop apiserver over a fake cluster")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--nodes", type=int, default=20)
    parser.add_argument("--review-latency-ms", type=float, default=200.0)
    parser.add_argument("--max-connections", type=int, help="APISERVER_MAX_CONNECTIONS")
    parser.add_argument("--gone-pods", type=int, default=1, help="nodes whose pod is deleted")
    args = parser.parse_args()
    cluster = InMemoryCluster(NAMESPACE)
    names = [f"node-{index:05d}" for index in range(args.nodes)]
    gone_names = [f"node-gone-{index:05d}" for index in range(args.gone_pods)]
    nodes = add_agent_nodes(cluster, names, args.work / "tokens")
    gone = add_agent_nodes(cluster, gone_names, args.work / "tokens")
    for node in nodes + gone:
        cluster.shadows.create(node.name, node.uid)
    reviewer = SlowTokenReviewer(cluster.token_reviewer, args.review_latency_ms / 1000)
    verifier = SignedClaims(reviewer, delete_pods(cluster, gone))
    counts = CallCounts(args.work)
    ports = Cluster(
        CountingShadows(cluster.shadows, counts),
        cluster.nodes,
        CountingPods(cluster.pods, counts),
        reviewer,
        cluster.workloads,
        cluster.policies,
        cluster.events,
        verifier,
        cluster.agent_pods,
        getattr(cluster, "service_accounts", None),
    )
    ApiserverContainer.cluster.override(providers.Object(ports))
    webhook_port = free_port()
    extra = {"APISERVER_WEBHOOK_PORT": str(webhook_port)}
    if args.max_connections:
        extra["APISERVER_MAX_CONNECTIONS"] = str(args.max_connections)
    port, tls = prepare_loopback_apiserver(args.work, extra)
    publish_ready(
        args.work,
        nodes,
        gone_nodes=[
            {"name": n.name, "uid": n.uid, "token": n.token_path.read_text()} for n in gone
        ],
        url=f"https://127.0.0.1:{port}",
        port=port,
        webhook_port=webhook_port,
        ca=str(tls.ca_cert),
    )
    code = apiserver_main([])
    print(json.dumps({"exit_code": code, "token_reviews": reviewer.reviews}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
