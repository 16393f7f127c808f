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

from tests.support.migrate_doc import migrated_values, rehearsed_blocks
from tests.support.original_install import ORIGINAL_VALUES

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


def value_paths(values: Any, prefix: str = "") -> list[str]:
    """The dotted path of every leaf of a values mapping (an empty mapping is a leaf)."""
    if not isinstance(values, dict) or not values:
        return [prefix]
    return [path for key, sub in values.items() for path in value_paths(sub, f"{prefix}{key}.")]


def set_values(page: str) -> list[str]:
    """The value names the page's shell blocks pass to helm with `--set NAME=...`."""
    blocks = re.findall(r"```sh\n(.*?)```", page, re.S)
    return [name for block in blocks for name in re.findall(r"--set ([\w.]+)=", block)]


def test_the_values_the_pages_helm_commands_set_are_in_the_chart() -> None:
    names = set_values(PAGE.read_text(encoding="utf-8"))
    values = yaml.safe_load(VALUES.read_text(encoding="utf-8"))
    assert names, "the page sets no value: its helm commands changed shape"
    assert [name for name in names if not has_value(values, name)] == []


def test_the_values_the_rehearsal_migrates_from_the_original_keep_their_names_in_the_chart() -> (
    None
):
    values = yaml.safe_load(VALUES.read_text(encoding="utf-8"))
    migrated = migrated_values(ORIGINAL_VALUES)
    paths = [path.rstrip(".") for path in value_paths(migrated)]
    assert [path for path in paths if not has_value(values, path)] == []
    dropped = set(value_paths(ORIGINAL_VALUES)) - set(value_paths(migrated))
    assert {p.rstrip(".") for p in dropped} == {
        "image",
        "update_window_start",
        "update_window_stop",
        "logging.ansi_enabled",
    }


def test_every_step_the_rehearsal_runs_is_a_shell_block_of_the_page() -> None:
    steps = rehearsed_blocks()
    assert set(steps) >= {
        "variables",
        "stop-controller",
        "forget-crd-release",
        "hand-over-crd",
        "mark-in-flight",
        "list-shadows",
        "keep-crd",
        "return-crd",
        "forget-brupop",
        "stored-versions",
        "rewrite-shadows",
    }
    assert all(block.strip().startswith(("kubectl", "NS=")) for block in steps.values())
