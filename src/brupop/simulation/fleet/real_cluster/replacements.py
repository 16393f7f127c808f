"""What the workload controllers and the scheduler would do: a workload pod that is gone (an
eviction, a drain) comes back on another schedulable Node.

scripts/control-plane runs neither the ReplicaSet and StatefulSet controllers nor a scheduler,
so without this stand-in every eviction would leave its budget one pod short for good (the
disruption controller counts the owner's replicas). The in-memory cluster does the same: the
replacement goes to the least loaded schedulable Node but the one it left (a StatefulSet's
keeps its name); with none, it waits until one is.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

import structlog
from kubernetes.client import CoreV1Api
from kubernetes.client.exceptions import ApiException
from kubernetes.watch import Watch
from urllib3.exceptions import HTTPError

from brupop.simulation.fleet.real_cluster.ownership import SIMULATED_SELECTOR

RECREATED_OWNER_KINDS = frozenset({"ReplicaSet", "StatefulSet"})
_WATCH_SECONDS = 2
_RETRY_SECONDS = 0.5
_KEPT_METADATA = ("name", "namespace", "labels", "annotations", "ownerReferences")

log = structlog.get_logger(__name__)


class ReplacementPods:
    """A thread that recreates the fleet's evicted workload pods."""

    def __init__(self, core: CoreV1Api) -> None:
        self._core = core
        self._pending: list[tuple[dict[str, Any], str | None]] = []  # (pod, node it left)
        self._suffix = itertools.count(1)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="replacement-pods", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        version: str | None = None
        while not self._stop.is_set():  # a version that expired (410) means a new list
            try:
                if version is None:
                    listed = self._core.list_pod_for_all_namespaces(
                        label_selector=SIMULATED_SELECTOR
                    )
                    version = listed.metadata.resource_version
                version = self._follow(version)
                self._place_pending()
            except (ApiException, HTTPError) as error:
                log.info("simulate.replacement_watch_restarted", error=str(error)[:200])
                version = None
                self._stop.wait(_RETRY_SECONDS)

    def _follow(self, version: str) -> str | None:
        """Watch for a while from `version`; replace each deleted workload pod (None: the
        version expired, list again)."""
        watch = Watch()
        stream = watch.stream(
            self._core.list_pod_for_all_namespaces,
            label_selector=SIMULATED_SELECTOR,
            resource_version=version,
            timeout_seconds=_WATCH_SECONDS,
            allow_watch_bookmarks=True,
            _request_timeout=_WATCH_SECONDS + 5,
        )
        for event in stream:
            raw = event["raw_object"]
            if event["type"] == "ERROR":
                watch.stop()
                return None
            version = raw.get("metadata", {}).get("resourceVersion") or version
            if event["type"] == "DELETED" and _recreated(raw):
                self._pending.append((raw, raw.get("spec", {}).get("nodeName")))
                self._place_pending()
            if self._stop.is_set():
                watch.stop()
        return version

    def _place_pending(self) -> None:
        waiting = []
        for pod, left in self._pending:
            target = self._pick_node(exclude=left)
            if target is None:
                waiting.append((pod, left))
                continue
            self._core.create_namespaced_pod(pod["metadata"]["namespace"], self._copy(pod, target))
        self._pending = waiting

    def _copy(self, pod: dict[str, Any], node: str) -> dict[str, Any]:
        metadata = {key: pod["metadata"][key] for key in _KEPT_METADATA if key in pod["metadata"]}
        owners = pod["metadata"].get("ownerReferences") or []
        if not any(owner.get("kind") == "StatefulSet" for owner in owners):
            metadata["name"] = f"{metadata['name'].rsplit('-', 1)[0]}-r{next(self._suffix)}"
        spec = dict(pod["spec"])
        spec["nodeName"] = node
        for assigned in ("volumes", "tolerations", "schedulerName", "enableServiceLinks"):
            spec.pop(assigned, None)  # the API server's defaults come back on create
        return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}

    def _pick_node(self, exclude: str | None) -> str | None:
        nodes = self._core.list_node(label_selector=SIMULATED_SELECTOR).items
        candidates: list[str] = [
            str(n.metadata.name)
            for n in nodes
            if not n.spec.unschedulable
            and n.metadata.deletion_timestamp is None
            and n.metadata.name != exclude
        ]
        if not candidates:
            return None
        load = dict.fromkeys(candidates, 0)
        for pod in self._core.list_pod_for_all_namespaces(label_selector=SIMULATED_SELECTOR).items:
            if pod.spec.node_name in load:
                load[pod.spec.node_name] += 1
        return min(candidates, key=lambda name: (load[name], name))


def _recreated(pod: dict[str, Any]) -> bool:
    owners = pod.get("metadata", {}).get("ownerReferences") or []
    return any(owner.get("kind") in RECREATED_OWNER_KINDS for owner in owners)
