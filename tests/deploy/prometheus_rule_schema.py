"""The part of prometheus-operator's `monitoring.coreos.com/v1` PrometheusRule that brupop's
chart uses, as JSON Schema.

kubernetes-validate has no schema for this custom resource. This one holds the required fields,
the duration format and the field names of rule groups and rules, so a typo or a missing field
fails here rather than in a cluster. Fields the chart does not use are refused: add them here
when the chart starts using them.
"""

from __future__ import annotations

from typing import Any

_NAME = {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", "maxLength": 253}
# Prometheus durations: units from years down to milliseconds, largest first, each at most once.
_DURATION = {
    "type": "string",
    "pattern": "^(0|([0-9]+y)?([0-9]+w)?([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?)$",
    "minLength": 1,
}
_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}

_RULE = {
    "type": "object",
    "required": ["expr"],
    "additionalProperties": False,
    # An alerting rule or a recording rule, never both.
    "oneOf": [{"required": ["alert"]}, {"required": ["record"]}],
    "properties": {
        "alert": {"type": "string", "minLength": 1},
        "record": {"type": "string", "minLength": 1},
        "expr": {"type": "string", "minLength": 1},
        "for": _DURATION,
        "labels": _STRING_MAP,
        "annotations": _STRING_MAP,
    },
}

_GROUP = {
    "type": "object",
    "required": ["name", "rules"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "interval": _DURATION,
        "rules": {"type": "array", "items": _RULE, "minItems": 1},
    },
}

PROMETHEUS_RULE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "additionalProperties": False,
    "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"},
        "kind": {"const": "PrometheusRule"},
        "metadata": {
            "type": "object",
            "required": ["name", "namespace"],
            "properties": {"name": _NAME, "namespace": _NAME, "labels": _STRING_MAP},
        },
        "spec": {
            "type": "object",
            "required": ["groups"],
            "additionalProperties": False,
            "properties": {"groups": {"type": "array", "items": _GROUP, "minItems": 1}},
        },
    },
}
