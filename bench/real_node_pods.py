"""Benchmark: the pods of a cluster with real nodes, as their nodes see them.

For every container of the pods in a namespace of a cluster started with
`scripts/control-plane up DIR --real-nodes N`: the seconds from its container's start to its
first log line (the kubelet's log file on the node: an agent's first line is its first report
attempt), CFS periods throttled and seconds throttled, memory peak against its limit, restarts
and OOM kills, read from the node's cgroups. `--deploy-agent` first runs the agent's DaemonSet
from deploy/bottlerocket-update-operator.yaml on every real node (image from the node's
containerd, nothing pulled), as the chart's limits set it.

    python bench/real_node_pods.py DIR [--deploy-agent] [--namespace NS] [--wait SECONDS]
"""

from __future__ import annotations

import argparse
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from kubernetes import client, config
from real_node_agent import deploy_agent
from real_node_cgroups import container_figures
from rig import emit, machine, progress

NAMESPACE = "brupop-bottlerocket-aws"


def first_line_time(
    root: Path, node: str, namespace: str, pod: str, container: str
) -> datetime | None:
    """The CRI timestamp of the container's first log line on its node, None before it."""
    for path in sorted(
        (root / "nodes" / node / "pod-logs").glob(f"{namespace}_{pod}_*/{container}/0.log")
    ):
        first = path.read_text(errors="replace").split("\n", 1)[0]
        if first:
            return datetime.fromisoformat(
                first.split(" ", 1)[0].replace("Z", "+00:00")[:26] + "+00:00"
            )
    return None


def measure(root: Path, core: client.CoreV1Api, namespace: str) -> list[dict[str, Any]]:
    rows = []
    for pod in core.list_namespaced_pod(namespace).items:
        for status in pod.status.container_statuses or []:
            started = status.state.running.started_at if status.state.running else None
            line = first_line_time(
                root, pod.spec.node_name, namespace, pod.metadata.name, status.name
            )
            cid = (status.container_id or "").removeprefix("containerd://")
            rows.append(
                {
                    "pod": pod.metadata.name,
                    "container": status.name,
                    "node": pod.spec.node_name,
                    "restarts": status.restart_count,
                    "start_to_first_line_s": round((line - started).total_seconds(), 2)
                    if started and line
                    else None,
                    **container_figures(pod.spec.node_name, pod.metadata.uid, cid),
                }
            )
    return rows


def wait_first_lines(root: Path, core: client.CoreV1Api, namespace: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        rows = measure(root, core, namespace)
        if rows and all(row["start_to_first_line_s"] is not None for row in rows):
            return
        time.sleep(1)
    progress(f"not every container logged within {seconds:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dir", type=Path)
    parser.add_argument("--namespace", default=NAMESPACE)
    parser.add_argument("--deploy-agent", action="store_true")
    parser.add_argument("--wait", type=float, default=300.0)
    arguments = parser.parse_args()
    root = arguments.dir.resolve()
    with config.new_client_from_config(config_file=str(root / "kubeconfig")) as api:
        core = client.CoreV1Api(api)
        if arguments.deploy_agent:
            deploy_agent(root, api)
        wait_first_lines(root, core, arguments.namespace, arguments.wait)
        rows = measure(root, core, arguments.namespace)
    emit(
        {
            "benchmark": "real_node_pods",
            "machine": machine(),
            "namespace": arguments.namespace,
            "containers": rows,
        }
    )


if __name__ == "__main__":
    main()
