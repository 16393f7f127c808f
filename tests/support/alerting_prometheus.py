"""A real Prometheus server on loopback for the alert-gate tests, run by the shared launcher
(`tests.support.prometheus_server`).

It scrapes a metrics endpoint the test serves (`set_triggers`) every second and evaluates a
rules file every second: `BrupopTestAlert` fires while `test_alert_trigger` is above 0 (its
series' labels, such as `severity`, become the alert's), `BrupopTestNoise` while
`test_noise_trigger` is."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType
from typing import Any

from tests.support.probe_server import ProbeServer
from tests.support.prometheus_server import PrometheusServer

RULES = """\
groups:
  - name: brupop-test
    interval: 1s
    rules:
      - alert: BrupopTestAlert
        expr: test_alert_trigger > 0
        for: 0s
      - alert: BrupopTestNoise
        expr: test_noise_trigger > 0
        for: 0s
"""


def _config(rules: Path, target: str) -> dict[str, Any]:
    return {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(rules)],
        "scrape_configs": [{"job_name": "trigger", "static_configs": [{"targets": [target]}]}],
    }


class AlertingPrometheus:
    """`with AlertingPrometheus() as prometheus:` a running server at `prometheus.url` whose
    alerts the test drives with `set_triggers`."""

    def __init__(self) -> None:
        self.metrics = ProbeServer()
        self.directory = Path(tempfile.mkdtemp(prefix="brupop-prometheus-"))
        self._stack = ExitStack()
        self._server: PrometheusServer | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("AlertingPrometheus is not running: use it in a `with` block")
        return self._server.url

    def set_triggers(self, alert: Mapping[str, float] | None = None, noise: float = 0.0) -> None:
        """Serve `test_alert_trigger{severity=...}` per severity and `test_noise_trigger`."""
        lines = ["# TYPE test_alert_trigger gauge"]
        for severity, value in sorted((alert or {"none": 0.0}).items()):
            lines.append(f'test_alert_trigger{{severity="{severity}"}} {value}')
        lines += ["# TYPE test_noise_trigger gauge", f"test_noise_trigger {noise}", ""]
        self.metrics.answers["/metrics"] = (200, "\n".join(lines).encode())

    def __enter__(self) -> AlertingPrometheus:
        self._stack.callback(shutil.rmtree, self.directory, ignore_errors=True)
        try:
            self._stack.enter_context(self.metrics)
            self.metrics.content_types["/metrics"] = "text/plain; version=0.0.4"
            self.set_triggers()
            rules = self.directory / "rules.yml"
            rules.write_text(RULES, encoding="utf-8")
            target = self.metrics.base_url.removeprefix("http://")
            server = PrometheusServer(self.directory, _config(rules, target))
            self._server = self._stack.enter_context(server)
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stack.close()
