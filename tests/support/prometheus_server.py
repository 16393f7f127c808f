"""A real Prometheus server on loopback for a test: started on a free port with a configuration
the test writes (and may rewrite and reload), asked through its HTTP API, always stopped.

Every wait is bounded; a failure names what Prometheus printed.
"""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml

from tests.support.polling import wait_until
from tests.support.ports import free_port
from tests.support.prometheus_tools import tool

READY_SECONDS = 60.0
STOP_SECONDS = 10.0
REQUEST_SECONDS = 20.0


class PrometheusError(AssertionError):
    """Prometheus did not start, reload or answer as expected."""


class PrometheusServer:
    """`prometheus` with its configuration and data in `directory`; a context manager."""

    def __init__(self, directory: Path, config: dict[str, Any]) -> None:
        self._directory = directory
        self._config_file = directory / "prometheus.yml"
        self._log = directory / "prometheus.log"
        self.write_config(config)
        self.url = f"http://127.0.0.1:{free_port()}"
        self._process: subprocess.Popen[bytes] | None = None

    def write_config(self, config: dict[str, Any]) -> None:
        self._config_file.write_text(yaml.safe_dump(config), encoding="utf-8")

    def __enter__(self) -> PrometheusServer:
        address = self.url.removeprefix("http://")
        with self._log.open("wb") as log:
            self._process = subprocess.Popen(
                [
                    str(tool("prometheus")),
                    f"--config.file={self._config_file}",
                    f"--storage.tsdb.path={self._directory / 'data'}",
                    f"--web.listen-address={address}",
                    "--web.enable-lifecycle",
                    "--log.level=warn",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            self._wait_ready()
        except BaseException:
            self.__exit__(None, None, None)  # a server that never got ready is still stopped
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        process = self._process
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=STOP_SECONDS)

    def log(self) -> str:
        """What Prometheus printed (its last 4000 characters)."""
        return self._log.read_text(encoding="utf-8", errors="replace")[-4000:]

    def _wait_ready(self) -> None:
        try:
            wait_until(self._ready, "prometheus ready", seconds=READY_SECONDS, interval=0.2)
        except AssertionError as late:
            raise PrometheusError(f"{late}:\n{self.log()}") from None

    def _ready(self) -> bool:
        if self._process is not None and self._process.poll() is not None:
            raise PrometheusError(f"prometheus exited at start:\n{self.log()}")
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as answer:
                return int(answer.status) == 200
        except OSError:  # URLError is one
            return False

    def reload(self, config: dict[str, Any]) -> None:
        """Rewrite the configuration and have Prometheus load it now."""
        self.write_config(config)
        request = urllib.request.Request(f"{self.url}/-/reload", method="POST")
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_SECONDS) as answer:
                answer.read()
        except urllib.error.HTTPError as error:
            raise PrometheusError(f"reload refused: {error.read()!r}\n{self.log()}") from error

    def api(self, path: str, **params: str) -> tuple[int, dict[str, Any]]:
        """GET `/api/v1/<path>` with `params`: the HTTP status and the JSON answer."""
        query = urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(
                f"{self.url}/api/v1/{path}?{query}", timeout=REQUEST_SECONDS
            ) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")

    def range_query(self, expr: str, start: float, end: float) -> list[dict[str, Any]]:
        """The series `expr` gives at one-second steps from `start` to `end`; a query Prometheus
        refuses (it does not parse) fails the test with Prometheus's reason."""
        status, answer = self.api(
            "query_range", query=expr, start=f"{start:.3f}", end=f"{end:.3f}", step="1"
        )
        if status != 200 or answer.get("status") != "success":
            raise PrometheusError(f"{expr!r}: HTTP {status}: {answer.get('error', answer)}")
        result: list[dict[str, Any]] = answer["data"]["result"]
        return result
