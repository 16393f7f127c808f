"""docs/migrate.md's table "What stays the same" names labels, environment variables, Helm
values, metrics and CRD names that the original and brupop for Python share: each must exist in
the code or the chart, so the page cannot drift silently when one is renamed."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "migrate.md"
VALUES = ROOT / "deploy" / "charts" / "bottlerocket-update-operator" / "values.yaml"
HEADING = "## What stays the same"
# Where a name of each kind must appear as a quoted string (Helm values are looked up instead).
SEARCHED: dict[str, tuple[str, ...]] = {
    "CRD group": ("src", "deploy"),
    "CRD": ("deploy",),
    "shadow name": ("src",),
    "namespace": ("src", "deploy"),
    "label": ("src",),
    "env var": ("src",),
    "metric": ("src",),
}
KINDS = (*SEARCHED, "Helm value")


def table_names(page: str) -> list[tuple[str, str]]:
    """(kind, name) for each row of the page's "What stays the same" table."""
    section = page.split(HEADING, 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        match = re.match(r"^\| ([^|]+?) \| `([^`]+)` \|", line)
        if match:
            rows.append((match.group(1), match.group(2)))
    return rows


@cache
def quoted_strings(folder: str) -> frozenset[str]:
    """Every string literal quoted in the folder's Python and YAML files (and YAML keys)."""
    found: set[str] = set()
    for path in (ROOT / folder).rglob("*"):
        if path.suffix not in (".py", ".yaml", ".tpl") or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        found.update(re.findall(r"[\"']([^\"'\n]+)[\"']", text))
        found.update(re.findall(r"^\s*(?:- )?(?:name|group|namespace): (\S+)$", text, re.M))
    return frozenset(found)


def has_value(values: dict[str, Any], dotted: str) -> bool:
    """The chart's values.yaml holds the value at this dotted path."""
    node: Any = values
    for key in dotted.split("."):
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def missing_names(rows: list[tuple[str, str]]) -> list[str]:
    """The rows whose name the code or the chart lacks, as `kind name`."""
    values = yaml.safe_load(VALUES.read_text(encoding="utf-8"))
    missing = []
    for kind, name in rows:
        if kind == "Helm value":
            present = has_value(values, name)
        else:
            present = any(name in quoted_strings(folder) for folder in SEARCHED[kind])
        if not present:
            missing.append(f"{kind} {name}")
    return missing


def test_the_migration_table_names_each_kind_it_promises() -> None:
    rows = table_names(PAGE.read_text(encoding="utf-8"))
    kinds = {kind for kind, _ in rows}
    assert kinds == set(KINDS)
    assert len(rows) >= 30


def test_every_name_in_the_migration_table_exists_in_the_code_or_the_chart() -> None:
    rows = table_names(PAGE.read_text(encoding="utf-8"))
    assert missing_names(rows) == []


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("env var", "APISERVER_SERVICE_PORTS"),
        ("label", "bottlerocket.aws/updater-interface"),
        ("Helm value", "logging.ansi_enabled"),
        ("metric", "brupop_hosts_states"),
        ("CRD", "bottlerocketshadow.brupop.bottlerocket.aws"),
    ],
)
def test_a_name_the_code_lacks_is_reported_missing(kind: str, name: str) -> None:
    assert missing_names([(kind, name)]) == [f"{kind} {name}"]
