"""An install of the original (Rust) brupop, as its chart 1.4.0 leaves a cluster, written from
the facts of the original's behaviour (not copied from its files): the shadow CRD (v2 stored, v1
served, converted by a webhook behind the apiserver's Service), the Helm values, the opt-in label,
and shadows in the shape the original's agents and controller write them.

Every name here is a literal on purpose: the original's names are fixed, so a rename on brupop
for Python's side shows up as a failed migration rather than passing silently.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from brupop.domain.versions import SEMVER_PATTERN  # semver.org's expression, as both enforce

NAMESPACE = "brupop-bottlerocket-aws"
GROUP = "brupop.bottlerocket.aws"
CRD_NAME = "bottlerocketshadows.brupop.bottlerocket.aws"
OPT_IN = ("bottlerocket.aws/updater-interface-version", "2.0.0")
LB_EXCLUSION = ("node.kubernetes.io/exclude-from-external-load-balancers", "True")
COMPONENT_LABEL = "brupop.bottlerocket.aws/component"
IMAGE = "public.ecr.aws/bottlerocket/bottlerocket-update-operator:v1.4.0"
V2_STATES = [
    "Idle",
    "StagedAndPerformedUpdate",
    "RebootedIntoUpdate",
    "MonitoringUpdate",
    "ErrorReset",
]
V1_STATES = ["Idle", "StagedUpdate", "PerformedUpdate", "RebootedIntoUpdate", "MonitoringUpdate"]
JSON = dict[str, Any]

# The original chart's values.yaml (chart 1.4.0), as a user who changed three of them keeps it
# in `helm get values` (`-a`): the concurrency, the load-balancer wait and the log level.
ORIGINAL_VALUES: JSON = {
    "namespace": NAMESPACE,
    "image": IMAGE,
    "placement": {
        "agent": {"tolerations": [], "priorityClassName": ""},
        "controller": {
            "tolerations": [],
            "nodeSelector": {},
            "podAffinity": {},
            "podAntiAffinity": {},
            "priorityClassName": "brupop-controller-high-priority",
        },
        "apiserver": {
            "topologySpreadConstraints": [],
            "tolerations": [],
            "nodeSelector": {},
            "podAffinity": {},
            "podAntiAffinity": {},
            "priorityClassName": "",
        },
    },
    "exclude_from_lb_wait_time_in_sec": "1",
    "max_concurrent_updates": "2",
    "update_window_start": "0:0:0",
    "update_window_stop": "0:0:0",
    "scheduler_cron_expression": "* * * * * * *",
    "apiserver_internal_port": "8443",
    "apiserver_service_port": "443",
    "logging": {
        "formatter": "pretty",
        "ansi_enabled": "true",
        "controller": {"tracing_filter": "debug"},
        "agent": {"tracing_filter": "info"},
        "apiserver": {"tracing_filter": "info"},
    },
    "prometheus": {"controller": {"serviceMonitor": {"enabled": False}}},
    "resources": {
        "agent": {
            "resources": {
                "limits": {"cpu": "10m", "memory": "50Mi"},
                "requests": {"cpu": "5m", "memory": "8Mi"},
            }
        },
        "apiserver": {
            "resources": {
                "limits": {"memory": "256Mi"},
                "requests": {"cpu": "10m", "memory": "40Mi"},
            }
        },
        "controller": {
            "resources": {
                "limits": {"memory": "256Mi"},
                "requests": {"cpu": "10m", "memory": "40Mi"},
            }
        },
    },
    "podLabels": {},
}


def original_shadow_crd() -> JSON:
    """The shadow CRD as the original's `bottlerocket-shadow` chart installs it: v2 stored, v1
    served, the webhook behind the `brupop-apiserver` Service on 443, its CA from cert-manager,
    and Helm's marks of the `brupop-crd` release."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": CRD_NAME,
            "labels": {"app.kubernetes.io/managed-by": "Helm"},
            "annotations": {
                "cert-manager.io/inject-ca-from": f"{NAMESPACE}/root-certificate",
                "meta.helm.sh/release-name": "brupop-crd",
                "meta.helm.sh/release-namespace": "default",
            },
        },
        "spec": {
            "group": GROUP,
            "names": {
                "kind": "BottlerocketShadow",
                "plural": "bottlerocketshadows",
                "singular": "bottlerocketshadow",
                "shortNames": ["brs"],
            },
            "scope": "Namespaced",
            "versions": [_v2(), _v1()],
            "conversion": {
                "strategy": "Webhook",
                "webhook": {
                    "clientConfig": {
                        "service": {
                            "name": "brupop-apiserver",
                            "namespace": NAMESPACE,
                            "path": "/crdconvert",
                            "port": 443,
                        }
                    },
                    "conversionReviewVersions": ["v2", "v1"],
                },
            },
        },
    }


def _semver(*, nullable: bool = False) -> JSON:
    return {"type": "string", "pattern": SEMVER_PATTERN} | ({"nullable": True} if nullable else {})


def _timestamp() -> JSON:
    return {"type": "string", "nullable": True}


def _columns(with_crash_count: bool) -> list[JSON]:
    columns = [
        ("State", ".status.current_state"),
        ("Version", ".status.current_version"),
        ("Target State", ".spec.state"),
        ("Target Version", ".spec.version"),
    ]
    if with_crash_count:
        columns.append(("Crash Count", ".status.crash_count"))
    return [{"name": name, "jsonPath": path, "type": "string"} for name, path in columns]


def _version(name: str, spec: JSON, status: JSON, *, storage: bool) -> JSON:
    schema = {
        "type": "object",
        "required": ["spec"],
        "properties": {"spec": spec, "status": status},
    }
    return {
        "name": name,
        "served": True,
        "storage": storage,
        "subresources": {"status": {}},
        "additionalPrinterColumns": _columns(with_crash_count=storage),
        "schema": {"openAPIV3Schema": schema},
    }


def _v2() -> JSON:
    status = _status(V2_STATES)
    status["required"] = ["crash_count", *status["required"]]
    status["properties"] |= {
        "crash_count": {"type": "integer", "format": "uint32", "minimum": 0},
        "state_transition_failure_timestamp": _timestamp(),
    }
    return _version("v2", _spec(V2_STATES), status, storage=True)


def _v1() -> JSON:
    return _version("v1", _spec(V1_STATES), _status(V1_STATES), storage=False)


def _spec(states: list[str]) -> JSON:
    """A version's spec schema: the state asked for, among `states`."""
    return {
        "type": "object",
        "required": ["state"],
        "properties": {
            "state": {"type": "string", "enum": states},
            "state_transition_timestamp": _timestamp(),
            "version": _semver(nullable=True),
        },
    }


def _status(states: list[str]) -> JSON:
    """A version's status schema as v1 has it (v2 adds the crash count and failure time)."""
    return {
        "type": "object",
        "nullable": True,
        "required": ["current_state", "current_version", "target_version"],
        "properties": {
            "current_version": _semver(),
            "target_version": _semver(),
            "current_state": {"type": "string", "enum": states},
        },
    }


def rust_timestamp(moment: datetime) -> str:
    """A time as the original writes it (chrono's `to_rfc3339`: nanoseconds and `+00:00`)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f") + "123+00:00"


@dataclass(frozen=True)
class OriginalNode:
    """One node of the original's rollout: its host, its shadow and its Node's marks."""

    name: str
    host_version: str
    spec_state: str = "Idle"
    spec_version: str | None = None
    spec_age_seconds: float | None = None  # when the original's controller wrote the spec
    status_state: str = "Idle"
    target_version: str = "1.20.0"
    crash_count: int = 0
    failed_seconds_ago: float | None = None
    cordoned: bool = False
    lb_excluded: bool = False

    @property
    def in_flight(self) -> bool:
        return self.spec_state != "Idle" or self.status_state != "Idle"


def original_shadow(node: OriginalNode, node_uid: str, now: datetime) -> JSON:
    """The node's shadow as the original leaves it: created by its apiserver (owned by the Node,
    no controller flag), spec from its controller, status from its agent (nulls written out)."""
    stamp = (
        rust_timestamp(now - timedelta(seconds=node.spec_age_seconds))
        if node.spec_age_seconds is not None
        else None
    )
    failed = (
        rust_timestamp(now - timedelta(seconds=node.failed_seconds_ago))
        if node.failed_seconds_ago is not None
        else None
    )
    return {
        "apiVersion": f"{GROUP}/v2",
        "kind": "BottlerocketShadow",
        "metadata": {
            "name": f"brs-{node.name}",
            "namespace": NAMESPACE,
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": node.name, "uid": node_uid}
            ],
        },
        "spec": {
            "state": node.spec_state,
            "state_transition_timestamp": stamp,
            "version": node.spec_version,
        },
        "status": {
            "current_version": node.host_version,
            "target_version": node.target_version,
            "current_state": node.status_state,
            "crash_count": node.crash_count,
            "state_transition_failure_timestamp": failed,
        },
    }


def stored_fields(shadow: JSON) -> JSON:
    """A shadow's spec and status, the part both operators read and write."""
    return copy.deepcopy({"spec": shadow.get("spec"), "status": shadow.get("status")})


def fields_the_original_knows(shadow: JSON) -> JSON:
    """`stored_fields` less what the original's v2 schema does not define (the host's kind and
    pre-staging fields): kube-apiserver prunes those once the original's CRD is back."""
    known = _v2()["schema"]["openAPIV3Schema"]["properties"]
    kept = stored_fields(shadow)
    for part in ("spec", "status"):
        if isinstance(kept[part], dict):
            names = known[part]["properties"]
            kept[part] = {key: value for key, value in kept[part].items() if key in names}
    return kept
