"""The chart's alert rules checked by the real promtool: the rule file is valid, and its unit
tests (tests/deploy/promtool/) show every alert firing and not firing, and catch a broken rule."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.observability_kit import PROMTOOL_TESTS, RULES_FILE, alert_rules
from tests.support.prometheus_tools import promtool

Rule = dict[str, Any]


def _unit_tests() -> dict[str, Any]:
    tests: dict[str, Any] = yaml.safe_load(PROMTOOL_TESTS.read_text(encoding="utf-8"))
    return tests


def test_promtool_accepts_the_rule_file() -> None:
    done = promtool("check", "rules", str(RULES_FILE))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(alert_rules())} rules found" in done.stdout


def test_promtool_refuses_a_rule_file_with_a_bad_expression(tmp_path: Path) -> None:
    broken = tmp_path / "rules.yaml"
    text = RULES_FILE.read_text(encoding="utf-8")
    assert "(brupop_fleet_halted) == 1" in text
    broken.write_text(text.replace("(brupop_fleet_halted) == 1", "(brupop_fleet_halted) == == 1"))
    done = promtool("check", "rules", str(broken))
    assert done.returncode != 0
    assert "BrupopFleetHalted" in done.stdout + done.stderr


def test_every_alert_has_a_firing_and_a_quiet_unit_test() -> None:
    firing: set[str] = set()
    quiet: set[str] = set()
    for case in _unit_tests()["tests"]:
        for check in case.get("alert_rule_test", []):
            (firing if check["exp_alerts"] else quiet).add(check["alertname"])
    names = {rule["alert"] for rule in alert_rules()}
    assert firing == names
    assert quiet == names


def test_the_alert_unit_tests_pass() -> None:
    done = promtool("test", "rules", str(PROMTOOL_TESTS))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def _without_for(rule: Rule) -> None:
    rule.pop("for")


def _never_true(rule: Rule) -> None:
    rule["expr"] = "max by (namespace) (brupop_nodes_waiting) < -1"


@pytest.mark.parametrize("alert", sorted(rule["alert"] for rule in alert_rules()))
@pytest.mark.parametrize("breakage", [_without_for, _never_true], ids=["no-for", "never-true"])
def test_the_unit_tests_catch_a_broken_alert(
    tmp_path: Path, alert: str, breakage: Callable[[Rule], None]
) -> None:
    """Alerting at once (no `for`) trips a quiet case; never alerting trips a firing case."""
    rules = yaml.safe_load(RULES_FILE.read_text(encoding="utf-8"))
    (rule,) = [r for group in rules["groups"] for r in group["rules"] if r.get("alert") == alert]
    breakage(rule)
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules), encoding="utf-8")
    unit_tests = _unit_tests()
    unit_tests["rule_files"] = ["rules.yaml"]
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(unit_tests), encoding="utf-8")
    done = promtool("test", "rules", str(tmp_path / "tests.yaml"))
    assert done.returncode != 0
    assert f"alertname: {alert}," in done.stdout + done.stderr
