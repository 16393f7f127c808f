"""The observability kit's sources, as the tests read them: the chart's alert rules and Grafana
dashboard (files/observability/, the same text the chart renders), the promtool unit tests, the
values that switch the kit on, and every PromQL expression the kit asks Prometheus."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.deploy.rendering import CHART

SOURCES = CHART / "files" / "observability"
RULES_FILE = SOURCES / "alert-rules.yaml"
DASHBOARD_FILE = SOURCES / "dashboard.json"
PROMTOOL_TESTS = Path(__file__).resolve().parent / "promtool" / "alert-rules.test.yaml"

# Every value of the kit; the chart test that wants each value covered counts these as toggles.
OBSERVABILITY_VALUES = (
    "prometheus.rules.enabled",
    "prometheus.rules.labels",
    "grafana.dashboard.enabled",
    "grafana.dashboard.label",
    "grafana.dashboard.labelValue",
    "grafana.dashboard.namespace",
    "grafana.dashboard.annotations",
)
KIT_ON: dict[str, Any] = {
    "prometheus": {"rules": {"enabled": True}, "controller": {"serviceMonitor": {"enabled": True}}},
    "grafana": {"dashboard": {"enabled": True}},
}
RULE_NAME = "brupop-alerts"
DASHBOARD_CONFIGMAP = "brupop-grafana-dashboard"

# Grafana's built-in interval variables, given the values a short test run needs.
_GRAFANA_VARIABLES = {"$__rate_interval": "1m", "$__range": "1h", "$__interval": "15s"}


@dataclass(frozen=True)
class Query:
    """One PromQL expression of the kit and where it comes from."""

    origin: str
    expr: str


def rule_groups() -> list[dict[str, Any]]:
    """The `groups` of the rule file."""
    groups: list[dict[str, Any]] = yaml.safe_load(RULES_FILE.read_text(encoding="utf-8"))["groups"]
    return groups


def alert_rules() -> list[dict[str, Any]]:
    """Every alerting rule of every group."""
    return [rule for group in rule_groups() for rule in group["rules"] if "alert" in rule]


def dashboard() -> dict[str, Any]:
    """The dashboard JSON."""
    document: dict[str, Any] = json.loads(DASHBOARD_FILE.read_text(encoding="utf-8"))
    return document


def _panels(panels: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for panel in panels:
        yield panel
        yield from _panels(panel.get("panels", []))


def dashboard_queries() -> list[Query]:
    """Every panel target's expression, with Grafana's interval variables filled in."""
    found = []
    for panel in _panels(dashboard()["panels"]):
        for target in panel.get("targets", []):
            expr = target["expr"]
            for variable, value in _GRAFANA_VARIABLES.items():
                expr = expr.replace(variable, value)
            found.append(Query(f"panel {panel['title']!r} {target['refId']}", expr))
    return found


def alert_queries() -> list[Query]:
    """Every alert's expression."""
    return [Query(f"alert {rule['alert']}", rule["expr"]) for rule in alert_rules()]


_SELECTOR = re.compile(r"\b([a-z_][a-z0-9_]*)\s*(\{[^}]*\})?")
_NOT_METRICS = frozenset(
    {
        "by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless",
        "bool", "offset", "sum", "max", "min", "avg", "count", "rate", "increase",
        "histogram_quantile", "le",
    }
)  # fmt: skip


def metric_selectors(expr: str) -> list[str]:
    """The metric selectors of `expr` (`name{matchers}`), e.g. to ask which return series.

    A small reader for the kit's own expressions (no string arguments outside matchers): a
    name followed by `(` is a function or aggregation, label names sit inside `by (...)`
    lists or matchers, and durations inside `[...]`.
    """
    without_ranges = re.sub(r"\[[^\]]*\]", "", expr)
    without_label_lists = re.sub(
        r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", r"\1", without_ranges
    )
    selectors = []
    for match in _SELECTOR.finditer(without_label_lists):
        name = match.group(1)
        rest = without_label_lists[match.end() :].lstrip()
        if name in _NOT_METRICS or (match.group(2) is None and rest.startswith("(")):
            continue
        selectors.append(match.group(0).replace(" ", ""))
    return list(dict.fromkeys(selectors))
