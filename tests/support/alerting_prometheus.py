"""A real Prometheus server on loopback for the alert-gate tests.

It scrapes a metrics endpoint the test serves (`set_triggers`) every second and evaluates a
rules file every second: `BrupopTestAlert` fires while `test_alert_trigger` is above 0 (its
series' labels, such as `severity`, become the alert's), `BrupopTestNoise` while
`test_noise_trigger` is. Every wait is bounded and polls; nothing sleeps a fixed time.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from tests.support.probe_server import ProbeServer

START_TIMEOUT_SECONDS = 60.0  # pytest-timeout gives a test 120 s in all
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
CONFIG = """\
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [{rules}]
scrape_configs:
  - job_name: trigger
    static_configs:
      - targets: ["{target}"]
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(what: str, done: Callable[[], bool], timeout: float = 45.0) -> None:
    """Poll `done` until it is true; AssertionError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() >= deadline:
            raise AssertionError(f"gave up after {timeout:g} s waiting for {what}")
        time.sleep(0.2)


class PrometheusServer:
    """`with PrometheusServer() as prometheus:` a running server at `prometheus.url`."""

    def __init__(self) -> None:
        self.metrics = ProbeServer()
        self.directory = Path(tempfile.mkdtemp(prefix="brupop-prometheus-"))
        self.url = f"http://127.0.0.1:{_free_port()}"
        self._process: subprocess.Popen[bytes] | None = None
        self._log: BinaryIO | None = None

    def set_triggers(self, alert: Mapping[str, float] | None = None, noise: float = 0.0) -> None:
        """Serve `test_alert_trigger{severity=...}` per severity and `test_noise_trigger`."""
        lines = ["# TYPE test_alert_trigger gauge"]
        for severity, value in sorted((alert or {"none": 0.0}).items()):
            lines.append(f'test_alert_trigger{{severity="{severity}"}} {value}')
        lines += ["# TYPE test_noise_trigger gauge", f"test_noise_trigger {noise}", ""]
        self.metrics.answers["/metrics"] = (200, "\n".join(lines).encode())

    def __enter__(self) -> PrometheusServer:
        prometheus = shutil.which("prometheus")
        if prometheus is None:
            raise RuntimeError("prometheus is not installed: run scripts/install-prometheus")
        self.metrics.__enter__()
        self.metrics.content_types["/metrics"] = "text/plain; version=0.0.4"
        self.set_triggers()
        rules = self.directory / "rules.yml"
        rules.write_text(RULES)
        config = self.directory / "prometheus.yml"
        target = self.metrics.base_url.removeprefix("http://")
        config.write_text(CONFIG.format(rules=rules, target=target))
        self._log = (self.directory / "prometheus.log").open("wb")
        self._process = subprocess.Popen(
            [
                prometheus,
                f"--config.file={config}",
                f"--storage.tsdb.path={self.directory / 'data'}",
                f"--web.listen-address={self.url.removeprefix('http://')}",
                "--log.level=warn",
            ],
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        try:
            wait_for("Prometheus to be ready", self._ready, START_TIMEOUT_SECONDS)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _ready(self) -> bool:
        if self._process is not None and self._process.poll() is not None:
            log = (self.directory / "prometheus.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"prometheus exited with {self._process.returncode}: {log}")
        try:
            with urllib.request.urlopen(self.url + "/-/ready", timeout=2) as answer:
                return bool(answer.status == 200)
        except OSError:
            return False

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(10)
        if self._log is not None:
            self._log.close()
        self.metrics.__exit__(None, None, None)
        shutil.rmtree(self.directory, ignore_errors=True)
