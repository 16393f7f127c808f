"""Pods for the real-node tests, run from the project's own control image (it has Python and
nothing else: no shell), and their logs read where the kubelet writes them on the node."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubernetes import client

from tests.support.control_plane.real_nodes.images import image_tag
from tests.support.polling import wait_until

PYTHON = "/opt/brupop/bin/python"
Doc = dict[str, Any]


def image() -> str:
    return f"localhost/brupop-control:{image_tag()}"


def python_pod(
    name: str, node: str, code: str, *, restart: str = "Never", labels: Doc | None = None
) -> Doc:
    """A pod on `node` running `python -c code` as the image's user, nothing pulled."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {"app": name}},
        "spec": {
            "nodeName": node,
            "restartPolicy": restart,
            "terminationGracePeriodSeconds": 20,
            "containers": [
                {
                    "name": "main",
                    "image": image(),
                    "imagePullPolicy": "Never",
                    "command": [PYTHON, "-c", code],
                }
            ],
        },
    }


def create(core: client.CoreV1Api, pod: Doc, namespace: str = "default") -> None:
    core.create_namespaced_pod(namespace, pod)


def phase(core: client.CoreV1Api, name: str, namespace: str = "default") -> str:
    return str(core.read_namespaced_pod(name, namespace).status.phase)


def wait_phase(core: client.CoreV1Api, name: str, wanted: str, seconds: float = 180) -> None:
    wait_until(
        lambda: phase(core, name) == wanted, f"pod {name} {wanted}", seconds=seconds, interval=0.5
    )


def log_files(
    node_folder: Path, name: str, container: str = "main", namespace: str = "default"
) -> list[Path]:
    """The container's log files on the node, oldest first (0.log, 1.log, ...)."""
    folders = sorted((node_folder / "pod-logs").glob(f"{namespace}_{name}_*/{container}"))
    files = [path for folder in folders for path in folder.glob("*.log")]
    return sorted(files, key=lambda path: int(path.stem) if path.stem.isdigit() else -1)


def log_lines(path: Path) -> list[str]:
    """The messages of a CRI log file (`<time> <stream> <tag> <message>` per line)."""
    return [line.split(" ", 3)[3] for line in path.read_text().splitlines() if line.count(" ") >= 3]


def logged(node_folder: Path, name: str, namespace: str = "default") -> list[str]:
    files = log_files(node_folder, name, namespace=namespace)
    return [line for path in files for line in log_lines(path)]


KNOCK = """
import socket, time
for attempt in range({attempts}):
    try:
        socket.create_connection(("{address}", {port}), timeout=3).close()
        print("connected", flush=True)
    except ConnectionRefusedError:
        print("refused", flush=True)
    except OSError as error:
        print("failed:", type(error).__name__, flush=True)
    time.sleep(2)
"""


def knocking_pod(
    name: str, node: str, address: str, port: int, labels: dict[str, str], owner: Doc
) -> Doc:
    """A pod on `node` that tries a TCP connection to address:port every 2 s, one line each
    (connected, refused, failed: ...). `owner` becomes its controller, so that no controller
    whose selector its labels match adopts it."""
    code = KNOCK.format(attempts=30, address=address, port=port)
    pod = python_pod(name, node, code, labels=labels)
    pod["metadata"]["ownerReferences"] = [{**owner, "controller": True}]
    return pod
