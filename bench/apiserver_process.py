"""The apiserver under load, in a process of its own (used by apiserver_throughput.py).

It serves the real app over the in-memory cluster on loopback HTTPS, with `--nodes` opted-in
nodes, each with its agent pod, token and shadow. Once serving it writes `ready.json` (URL, CA,
each node's name, UID and token) into `--work`; on SIGTERM it stops and prints one JSON object:
the TokenReviews it made and the requests it answered.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from ready_file import publish_ready
from rig import NAMESPACE, add_agent_nodes, send_logs_to, start_apiserver

from brupop.adapters.apiserver_http.app import ApiserverOptions
from brupop.adapters.memory.cluster import InMemoryCluster

# What serves HTTP (see adapters/apiserver_http/serving/server.py): uvicorn's httptools protocol
# with bounds on request heads, behind brupop's own TLS admission.
HTTP_PROTOCOL = "BoundedHttpProtocol (uvicorn + httptools)"


def main() -> int:
    parser = argparse.ArgumentParser(description="serve the apiserver for a load test")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--token-review-cache-seconds", type=float, default=30.0)
    args = parser.parse_args()
    send_logs_to(args.work / "apiserver.log")
    cluster = InMemoryCluster(NAMESPACE)
    names = [f"node-{index:05d}" for index in range(args.nodes)]
    nodes = add_agent_nodes(cluster, names, args.work / "tokens")
    for node in nodes:
        cluster.shadows.create(node.name, node.uid)
    options = ApiserverOptions(
        namespace=NAMESPACE, token_review_cache_seconds=args.token_review_cache_seconds
    )
    apiserver = start_apiserver(cluster, args.work, options)
    stop = threading.Event()

    def request_stop(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, request_stop)
    publish_ready(args.work, nodes, url=apiserver.url, ca=str(apiserver.tls.ca_cert))
    stop.wait()
    apiserver.stop()
    print(
        json.dumps(
            {
                "token_reviews": cluster.token_reviewer.review_count,
                "requests_answered": apiserver.requests_answered(),
                "http_protocol": HTTP_PROTOCOL,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
