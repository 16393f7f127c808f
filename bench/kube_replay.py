"""Replays Kubernetes API answers (lists and watch streams) of recorded shape to the real
Kubernetes adapters, without a network: what decoding a real cluster's objects costs.

The objects have the shape an apiserver sends: a BottlerocketShadow with its owner reference
and managed fields (about 1.4 KiB, as measured on a real cluster's 10k-shadow list of 14 MiB);
a Node with the labels, annotations, conditions, addresses and cached images of an EKS
Bottlerocket node (about 5.7 KiB, as measured: 57 MiB for 10k Nodes).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

from kubernetes.client import ApiClient

from brupop.adapters.kubernetes.api.calls import JSON

NAMESPACE = "brupop-bottlerocket-aws"
SHADOWS_PATH = f"/apis/brupop.bottlerocket.aws/v2/namespaces/{NAMESPACE}/bottlerocketshadows"
NODES_PATH = "/api/v1/nodes"
STAMP = "2026-01-05T10:00:00Z"


def node_name(index: int) -> str:
    return f"ip-10-0-{index // 250}-{index % 250}.us-west-2.compute.internal"


def _managed(manager: str, fields: JSON) -> JSON:
    return {
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
        "manager": manager,
        "operation": "Update",
        "time": STAMP,
    }


def shadow_object(index: int, version: int) -> JSON:
    name = node_name(index)
    return {
        "apiVersion": "brupop.bottlerocket.aws/v2",
        "kind": "BottlerocketShadow",
        "metadata": {
            "creationTimestamp": STAMP,
            "generation": 3,
            "name": f"brs-{name}",
            "namespace": NAMESPACE,
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": name, "uid": f"uid-node-{index}"}
            ],
            "resourceVersion": str(version),
            "uid": f"0b6a3c2e-5f1d-4c8e-9a7b-{index:012d}",
            "managedFields": [
                _managed("brupop-agent", {"f:status": {".": {}, "f:crash_count": {}}}),
                _managed("brupop-controller", {"f:spec": {".": {}, "f:state": {}}}),
            ],
        },
        "spec": {"state": "Idle", "state_transition_timestamp": None, "version": None},
        "status": {
            "current_version": "1.20.0",
            "target_version": "1.20.0",
            "current_state": "Idle",
            "crash_count": 0,
            "state_transition_failure_timestamp": None,
        },
    }


def node_object(index: int, version: int) -> JSON:
    name = node_name(index)
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": "m5.large",
        "beta.kubernetes.io/os": "linux",
        "bottlerocket.aws/updater-interface-version": "2.0.0",
        "eks.amazonaws.com/capacityType": "ON_DEMAND",
        "eks.amazonaws.com/nodegroup": "bottlerocket-ng",
        "eks.amazonaws.com/nodegroup-image": "ami-0123456789abcdef0",
        "failure-domain.beta.kubernetes.io/region": "us-west-2",
        "failure-domain.beta.kubernetes.io/zone": "us-west-2a",
        "k8s.io/cloud-provider-aws": "0123456789abcdef0123456789abcdef",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": "m5.large",
        "topology.kubernetes.io/region": "us-west-2",
        "topology.kubernetes.io/zone": "us-west-2a",
    }
    conditions = [
        {
            "lastHeartbeatTime": STAMP,
            "lastTransitionTime": STAMP,
            "message": message,
            "reason": reason,
            "status": status,
            "type": kind,
        }
        for kind, status, reason, message in (
            ("MemoryPressure", "False", "KubeletHasSufficientMemory", "has sufficient memory"),
            ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            ("PIDPressure", "False", "KubeletHasSufficientPID", "has sufficient PID available"),
            ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
        )
    ]
    images = [
        {
            "names": [
                f"602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/image-{i}@sha256:{i:064x}",
                f"602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/image-{i}:v1.{i}.0",
            ],
            "sizeBytes": 10_000_000 + i,
        }
        for i in range(12)
    ]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {
                "alpha.kubernetes.io/provided-node-ip": f"10.0.{index // 250}.{index % 250}",
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "creationTimestamp": STAMP,
            "labels": labels,
            "name": name,
            "resourceVersion": str(version),
            "uid": f"uid-node-{index}",
            "managedFields": [
                _managed("kubelet", {"f:metadata": {"f:labels": {"f:kubernetes.io/os": {}}}}),
                _managed("kube-controller-manager", {"f:spec": {"f:podCIDR": {}}}),
            ],
        },
        "spec": {"providerID": f"aws:///us-west-2a/i-{index:017x}"},
        "status": {
            "addresses": [
                {"address": f"10.0.{index // 250}.{index % 250}", "type": "InternalIP"},
                {"address": name, "type": "Hostname"},
                {"address": name, "type": "InternalDNS"},
            ],
            "allocatable": {
                "cpu": "1930m", "ephemeral-storage": "18242267924", "memory": "7220152Ki",
                "pods": "29",
            },
            "capacity": {
                "cpu": "2", "ephemeral-storage": "20959212Ki", "memory": "7934904Ki", "pods": "29"
            },
            "conditions": conditions,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": images,
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": f"{index:032x}",
                "containerRuntimeVersion": "containerd://1.7.20+bottlerocket",
                "kernelVersion": "6.1.102",
                "kubeProxyVersion": "v1.30.2-eks-1552ad0",
                "kubeletVersion": "v1.30.2-eks-1552ad0",
                "machineID": f"{index:032x}",
                "operatingSystem": "linux",
                "osImage": "Bottlerocket OS 1.20.0 (aws-k8s-1.30)",
                "systemUUID": f"ec2{index:029x}",
            },
        },
    }  # fmt: skip


PARTIAL_METADATA = "meta.k8s.io/v1"


def _compact(obj: JSON) -> str:
    return json.dumps(obj, separators=(",", ":"))


class RecordedList:
    """A list answer as the apiserver serves it: every item's JSON, in pages on request, whole
    or (a PartialObjectMetadataList, as asked with `as=PartialObjectMetadataList` in Accept)
    each item's metadata alone, all of it, managed fields included."""

    def __init__(self, kind: str, items: Iterable[JSON], version: int) -> None:
        self.kind = kind
        self.version = str(version)
        self.items: list[str] = []
        self.metadata_items: list[str] = []
        for item in items:
            self.items.append(_compact(item))
            partial = {"apiVersion": PARTIAL_METADATA, "kind": "PartialObjectMetadata"}
            self.metadata_items.append(_compact(partial | {"metadata": item["metadata"]}))

    @property
    def size(self) -> int:
        """Bytes of the whole list in one answer."""
        return sum(len(item) + 1 for item in self.items)

    @property
    def metadata_size(self) -> int:
        """Bytes of the list of metadata only in one answer."""
        return sum(len(item) + 1 for item in self.metadata_items)

    def page(self, limit: int | None, token: str | None, *, metadata_only: bool = False) -> bytes:
        items = self.metadata_items if metadata_only else self.items
        start = int(token or 0)
        end = len(items) if not limit else min(start + limit, len(items))
        meta: JSON = {"resourceVersion": self.version}
        if end < len(items):
            meta["continue"] = str(end)
        kind, version = (self.kind, "v1")
        if metadata_only:
            kind, version = ("PartialObjectMetadataList", PARTIAL_METADATA)
        head = json.dumps({"apiVersion": version, "kind": kind, "metadata": meta})
        return f'{head[:-1]}, "items": [{",".join(items[start:end])}]}}'.encode()


def watch_body(objects: Iterable[JSON]) -> bytes:
    """A watch stream of MODIFIED events, one JSON line each."""
    lines = (json.dumps({"type": "MODIFIED", "object": o}, separators=(",", ":")) for o in objects)
    return ("\n".join(lines) + "\n").encode()


class _Stream:
    """A watch answer: the recorded lines in chunks, as urllib3 hands them over."""

    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, amt: Any = None, decode_content: bool = False) -> Iterator[bytes]:
        for start in range(0, len(self._body), 65536):
            yield self._body[start : start + 65536]

    def close(self) -> None:
        return None

    def release_conn(self) -> None:
        return None


class _ReplayedApiClient(ApiClient):  # type: ignore[misc]  # the client is untyped
    """The official client up to the HTTP request, which `lists` answers by the request's path,
    its `limit` and `continue`, and its Accept header (metadata only or whole objects)."""

    def __init__(self, lists: dict[str, RecordedList]) -> None:
        super().__init__()
        self.lists = lists
        self.pages = 0

    def request(
        self,
        method: str,
        url: str,
        query_params: Any = None,
        headers: Any = None,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        self.pages += 1
        query = dict(query_params or ())
        metadata_only = "as=PartialObjectMetadataList" in (headers or {}).get("Accept", "")
        recorded = self.lists[urlsplit(url).path]
        page = recorded.page(query.get("limit"), query.get("continue"), metadata_only=metadata_only)
        return SimpleNamespace(status=200, data=page)


class ReplayedCalls:
    """ApiCalls whose every list request goes through the official client as the adapters make
    it and is answered from `lists[path]` (in pages when asked, metadata only when asked), and
    every watch with `watch_bodies[action]`, parsing exactly as the real ApiCalls does."""

    def __init__(self) -> None:
        self.lists: dict[str, RecordedList] = {}
        self.api_client = _ReplayedApiClient(self.lists)
        self.watch_bodies: dict[str, bytes] = {}

    @property
    def pages(self) -> int:
        """List requests answered so far."""
        return self.api_client.pages

    def json(self, action: str, method: Callable[..., Any], *args: Any, **kwargs: Any) -> JSON:
        from brupop.adapters.kubernetes.api.calls import _parse  # the adapter's own parsing

        return _parse(action, method(*args, _preload_content=False, **kwargs).data)

    def stream(
        self,
        action: str,
        method: Callable[..., Any],
        read_timeout: float,
        *args: Any,
        **kwargs: Any,
    ) -> _Stream:
        return _Stream(self.watch_bodies.pop(action, b""))
