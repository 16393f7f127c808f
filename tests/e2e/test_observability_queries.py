"""The observability kit against a real Prometheus on loopback: it scrapes the controller and
the apiserver of a `brupop simulate` run (their free ports read from the run's endpoints.json),
loads the chart's alert rules, and answers every dashboard query and every alert expression
with series."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from brupop.entrypoints.controller.metrics import PrometheusRolloutMetrics
from tests.deploy.observability_kit import (
    RULES_FILE,
    Query,
    alert_queries,
    dashboard_queries,
    metric_selectors,
)
from tests.support.policy_file import write_policy_file
from tests.support.polling import wait_until
from tests.support.prometheus_server import PrometheusServer

# Defined by the rollout-safety work (issue 11) in the controller's metrics; until the controller
# exports one of them, queries on it are only required to parse. Once it does, they must return
# series like every other query: nothing to change here.
ROLLOUT_SAFETY_METRICS = frozenset(
    {"brupop_fleet_halted", "brupop_fleet_paused", "brupop_health_gate_failures_total"}
)
# kube-state-metrics' series (the agent DaemonSet), which no simulation exports.
KUBE_STATE_METRICS = frozenset(
    {"kube_daemonset_status_number_unavailable", "kube_daemonset_status_desired_number_scheduled"}
)
ENDPOINTS_WAIT_SECONDS = 60.0
RUN_SECONDS = 90
MIN_SCRAPES = 3


def _exported_by_the_controller(metric: str) -> bool:
    return f"# HELP {metric} " in PrometheusRolloutMetrics().exposition().decode()


def _not_yet_exported(selector: str) -> bool:
    name = selector.split("{", 1)[0]
    return name in ROLLOUT_SAFETY_METRICS and not _exported_by_the_controller(name)


def _config(endpoints: dict[str, str] | None) -> dict[str, Any]:
    config: dict[str, Any] = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(RULES_FILE)],
    }
    if endpoints is not None:
        config["scrape_configs"] = [
            {
                "job_name": "brupop-controller",
                "static_configs": [{"targets": [urlsplit(endpoints["controller"]).netloc]}],
            },
            {
                "job_name": "brupop-apiserver",
                "scheme": "https",
                "tls_config": {"ca_file": endpoints["ca_file"]},
                "static_configs": [{"targets": [urlsplit(endpoints["apiserver"]).netloc]}],
            },
        ]
    return config


# A health gate that node-03 fails (a failure by check), with room for failures before a halt.
SPEC = """\
  haltAfterFailures: 5
  healthGate:
    timeoutSeconds: 2
"""


def _start_simulate(work_dir: Path, log_path: Path) -> subprocess.Popen[bytes]:
    """A rollout long enough to be scraped: one node at a time, a drain that fails (a failure
    by reason), a node that fails its health gate (a failure by check), and a quiet end while
    the failed node backs off."""
    policy = write_policy_file(log_path.parent, SPEC)
    command = [
        sys.executable, "-m", "brupop", "simulate", "--nodes", "4", "--max-concurrent", "1",
        "--block-drain", "node-02", "--drain-timeout", "3", "--settle-seconds", "8",
        "--policy", policy, "--unhealthy", "node-03",
        "--timeout", str(RUN_SECONDS), "--live", "off", "--work-dir", str(work_dir),
    ]  # fmt: skip
    with log_path.open("wb") as log:
        return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)


def _wait_endpoints(work_dir: Path, run: subprocess.Popen[bytes]) -> dict[str, str]:
    path = work_dir / "endpoints.json"
    wait_until(
        lambda: path.exists() or run.poll() is not None,
        f"{path}",
        seconds=ENDPOINTS_WAIT_SECONDS,
        interval=0.1,
    )
    assert path.exists(), f"no {path}: the run exited {run.poll()}"
    endpoints: dict[str, str] = json.loads(path.read_text(encoding="utf-8"))
    return endpoints


def _problems(prometheus: PrometheusServer, query: Query, start: float, end: float) -> list[str]:
    """Why `query` fails the kit's promise: it must parse and give series. An alert expression
    is normally empty: then each of its selectors must give series instead."""
    series = prometheus.range_query(query.expr, start, end)  # fails the test unless it parses
    selectors = metric_selectors(query.expr)
    if series or any(_not_yet_exported(selector) for selector in selectors):
        return []
    if not query.origin.startswith("alert"):
        return [f"{query.origin}: no series for {query.expr!r}"]
    return [
        f"{query.origin}: no series for its selector {selector}"
        for selector in selectors
        if selector.split("{", 1)[0] not in KUBE_STATE_METRICS
        and not prometheus.range_query(selector, start, end)
    ]


def _rule_errors(prometheus: PrometheusServer) -> list[str]:
    status, answer = prometheus.api("rules")
    assert status == 200, answer
    rules = [rule for group in answer["data"]["groups"] for rule in group["rules"]]
    assert len(rules) == len(alert_queries())
    return [f"{rule['name']}: {rule.get('lastError')}" for rule in rules if rule["health"] != "ok"]


@pytest.mark.e2e
@pytest.mark.timeout(300)
def test_prometheus_answers_every_dashboard_query_and_alert_from_a_simulated_rollout(
    tmp_path: Path,
) -> None:
    work_dir = tmp_path / "work"
    (tmp_path / "prometheus").mkdir()
    with PrometheusServer(tmp_path / "prometheus", _config(None)) as prometheus:
        start = time.time()
        run = _start_simulate(work_dir, tmp_path / "simulate.log")
        try:
            prometheus.reload(_config(_wait_endpoints(work_dir, run)))
            returncode = run.wait(timeout=RUN_SECONDS + 60)
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
        end = time.time()
        output = (tmp_path / "simulate.log").read_text(encoding="utf-8", errors="replace")
        assert returncode == 1 and "node-02" in output.splitlines()[-1], output[-3000:]

        scraped = {
            series["metric"]["job"]: len(series["values"])
            for series in prometheus.range_query("up == 1", start, end)
        }
        assert min(scraped.get(job, 0) for job in ("brupop-controller", "brupop-apiserver")) >= (
            MIN_SCRAPES
        ), f"scrapes per job: {scraped}\n{prometheus.log()}"

        problems = [
            problem
            for query in [*dashboard_queries(), *alert_queries()]
            for problem in _problems(prometheus, query, start, end)
        ]
        assert problems == []
        assert _rule_errors(prometheus) == []
