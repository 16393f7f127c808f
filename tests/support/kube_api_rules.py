"""Rules of the Kubernetes API that the emulator imitates: selectors, patches, budgets, Status.

Plain functions over JSON dicts, so the emulator's HTTP code stays about HTTP.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]


@dataclass(frozen=True)
class Kind:
    """A resource the emulator serves."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    has_status: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


KINDS: dict[tuple[str, str, str], Kind] = {
    (k.group, k.version, k.plural): k
    for k in (
        Kind("", "v1", "nodes", "Node", namespaced=False, has_status=True),
        Kind("", "v1", "pods", "Pod", namespaced=True, has_status=True),
        Kind("", "v1", "events", "Event", namespaced=True),
        Kind("", "v1", "serviceaccounts", "ServiceAccount", namespaced=True),
        Kind("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, True),
        Kind("coordination.k8s.io", "v1", "leases", "Lease", namespaced=True),
        Kind("apps", "v1", "replicasets", "ReplicaSet", namespaced=True, has_status=True),
        Kind("apps", "v1", "statefulsets", "StatefulSet", namespaced=True, has_status=True),
        Kind("", "v1", "replicationcontrollers", "ReplicationController", True, True),
        Kind(
            "brupop.bottlerocket.aws", "v2", "bottlerocketshadows", "BottlerocketShadow", True, True
        ),
        Kind(
            "brupop.bottlerocket.aws",
            "v1",
            "bottlerocketupdatepolicies",
            "BottlerocketUpdatePolicy",
            namespaced=True,
            has_status=True,
        ),
    )
}
NODES, PODS = KINDS["", "v1", "nodes"], KINDS["", "v1", "pods"]
BUDGETS = KINDS["policy", "v1", "poddisruptionbudgets"]
EVENTS = KINDS["", "v1", "events"]
SERVICE_ACCOUNTS = KINDS["", "v1", "serviceaccounts"]
SHADOWS = KINDS["brupop.bottlerocket.aws", "v2", "bottlerocketshadows"]
POLICIES = KINDS["brupop.bottlerocket.aws", "v1", "bottlerocketupdatepolicies"]
WORKLOADS = {
    "ReplicaSet": KINDS["apps", "v1", "replicasets"],
    "StatefulSet": KINDS["apps", "v1", "statefulsets"],
    "ReplicationController": KINDS["", "v1", "replicationcontrollers"],
}


class SelectorError(ValueError):
    """A label or field selector the emulator does not understand (the API answers 400)."""


def status_body(code: int, reason: str, message: str, details: JSON | None = None) -> JSON:
    """A `v1 Status` object, as the kube-apiserver sends with every error."""
    body: JSON = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success" if code < 400 else "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        body["details"] = details
    return body


PARTIAL_METADATA_VERSION = "meta.k8s.io/v1"
NOT_ACCEPTABLE = (
    "only the following media types are accepted: application/json, "
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
)


def metadata_only_wanted(accept: str) -> bool | None:
    """What a list's Accept header asks for, negotiated as kube-apiserver does (the first media
    range it can serve wins): True for items of metadata only (`as=PartialObjectMetadataList;
    g=meta.k8s.io;v=v1`), False for whole objects, None for neither (it answers 406)."""
    if not accept.strip():
        return False
    for media_range in accept.split(","):
        media, *parameters = (part.strip() for part in media_range.split(";"))
        options = dict(parameter.partition("=")[::2] for parameter in parameters)
        options.pop("q", None)
        if media not in ("application/json", "application/*", "*/*"):
            continue
        if "as" not in options:
            return False
        if (options["as"], options.get("g"), options.get("v")) == (
            "PartialObjectMetadataList",
            "meta.k8s.io",
            "v1",
        ):
            return True
    return None


def metadata_only(answer: JSON) -> JSON:
    """A list answer as a PartialObjectMetadataList: each item its metadata, all of it."""
    return {
        "apiVersion": PARTIAL_METADATA_VERSION,
        "kind": "PartialObjectMetadataList",
        "metadata": answer["metadata"],
        "items": [
            {
                "apiVersion": PARTIAL_METADATA_VERSION,
                "kind": "PartialObjectMetadata",
                "metadata": item.get("metadata") or {},
            }
            for item in answer["items"]
        ],
    }


LabelTest = Callable[[Mapping[str, str]], bool]
FieldTest = Callable[[JSON], bool]


def label_matcher(selector: str | None) -> LabelTest:
    """Equality- and existence-based label selectors: `a=b`, `a==b`, `a!=b`, `a`, `!a`."""
    tests = [_label_test(term) for term in _terms(selector)]
    return lambda labels: all(test(labels) for test in tests)


def _label_test(term: str) -> LabelTest:
    if " in " in term or " notin " in term:
        raise SelectorError(f"set-based selector not supported: {term!r}")
    if "!=" in term:
        key, value = (part.strip() for part in term.split("!=", 1))
        return lambda labels: labels.get(key) != value
    if "=" in term:
        key, value = (part.strip() for part in term.replace("==", "=").split("=", 1))
        return lambda labels: labels.get(key) == value
    if term.startswith("!"):
        absent = term[1:].strip()
        return lambda labels: absent not in labels
    return lambda labels: term in labels


def field_matcher(selector: str | None) -> FieldTest:
    """Field selectors `path=value`, `path==value`, `path!=value` over dotted JSON paths."""
    tests = [_field_test(term) for term in _terms(selector)]
    return lambda obj: all(test(obj) for test in tests)


def _field_test(term: str) -> FieldTest:
    negate = "!=" in term
    separator = "!=" if negate else "="
    path, value = (part.strip() for part in term.replace("==", "=").split(separator, 1))
    if not path or "=" in value:
        raise SelectorError(f"bad field selector term: {term!r}")
    return lambda obj: (str(_dig(obj, path) or "") == value) != negate


def _terms(selector: str | None) -> list[str]:
    return [term.strip() for term in (selector or "").split(",") if term.strip()]


def _dig(obj: JSON, path: str) -> Any:
    current: Any = obj
    for key in path.split("."):
        current = current.get(key) if isinstance(current, dict) else None
    return current


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: objects merge recursively, null deletes, the rest replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def apply_patch(content_type: str, target: JSON, patch: Any) -> JSON:
    """Apply a merge-patch body; ValueError (a 415) for other types, which brupop never sends."""
    kind = content_type.split(";")[0].strip().lower()
    if kind in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
        if not isinstance(patch, dict):
            raise ValueError("a merge patch must be a JSON object")
        return dict(merge_patch(target, patch))
    raise ValueError(f"unsupported patch Content-Type {content_type!r}")


def is_healthy(pod: JSON) -> bool:
    """A pod counts towards a budget while it runs and is not being deleted."""
    return _dig(pod, "status.phase") == "Running" and not _dig(pod, "metadata.deletionTimestamp")


def budget_selects(budget: JSON, pod: JSON) -> bool:
    """The budget's selector (matchLabels and matchExpressions) selects the pod, in its
    namespace; a budget without a selector selects nothing (policy/v1)."""
    if _dig(budget, "metadata.namespace") != _dig(pod, "metadata.namespace"):
        return False
    selector = _dig(budget, "spec.selector")
    if not isinstance(selector, dict):
        return False
    labels = _dig(pod, "metadata.labels") or {}
    wanted = selector.get("matchLabels") or {}
    return all(labels.get(key) == value for key, value in wanted.items()) and all(
        _expression_holds(term, labels) for term in selector.get("matchExpressions") or []
    )


def _expression_holds(term: JSON, labels: JSON) -> bool:
    key, values = str(term.get("key")), term.get("values") or []
    match term.get("operator"):
        case "In":
            return labels.get(key) in values
        case "NotIn":
            return labels.get(key) not in values
        case "Exists":
            return key in labels
        case "DoesNotExist":
            return key not in labels
    return False


def _scaled(count: Any, expected: int) -> int | None:
    """An int-or-percent count of a budget as pods, rounded up as the disruption controller
    does; None when absent."""
    if isinstance(count, str) and count.endswith("%"):
        return -(-int(count[:-1]) * expected // 100)
    return count if isinstance(count, int) else None


def budget_refusal(budget: JSON, selected: list[JSON]) -> str | None:
    """Why evicting one more selected pod would break the budget; None when it would not."""
    healthy = sum(1 for pod in selected if is_healthy(pod))
    name = _dig(budget, "metadata.name")
    min_available = _scaled(_dig(budget, "spec.minAvailable"), len(selected))
    max_unavailable = _scaled(_dig(budget, "spec.maxUnavailable"), len(selected))
    if min_available is not None and healthy - 1 < min_available:
        return (
            f"The disruption budget {name} needs {min_available} healthy pods "
            f"and has {healthy} currently"
        )
    if max_unavailable is not None and len(selected) - healthy + 1 > max_unavailable:
        return f"The disruption budget {name} allows {max_unavailable} unavailable pods"
    return None


def spec_content(obj: JSON) -> JSON:
    """Everything but metadata and status: what `metadata.generation` counts changes of."""
    return {key: value for key, value in obj.items() if key not in ("metadata", "status")}


def without_version(obj: JSON) -> JSON:
    meta = {k: v for k, v in obj.get("metadata", {}).items() if k != "resourceVersion"}
    return obj | {"metadata": meta}


def split_status(current: JSON, wanted: JSON, *, status_only: bool) -> JSON:
    """The status subresource writes only status; the main resource writes all but status."""
    if status_only:
        merged = copy.deepcopy(current)
        if "status" in wanted:
            merged["status"] = wanted["status"]
        else:
            merged.pop("status", None)
        return merged
    merged = {key: value for key, value in wanted.items() if key != "status"}
    if "status" in current:
        merged["status"] = copy.deepcopy(current["status"])
    return merged
