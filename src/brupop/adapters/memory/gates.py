"""In-memory stand-ins for what the controller's gates reach outside the cluster: HTTP probe
targets and an alert source, set up by tests and `brupop simulate`."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from brupop.domain.policy.alert_matcher import AlertMatcher
from brupop.domain.safety.alert_gate import FiringAlert, matching_alerts
from brupop.domain.safety.gate_checks import ProbeAnswer
from brupop.ports.alert_source import AlertSource, AlertSourceError
from brupop.ports.http_prober import HttpProber


class InMemoryHttpProber:
    """Answers each URL with the status (or error) set for it; an unknown URL is refused."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._answers: dict[str, ProbeAnswer] = {}
        self.probed: list[str] = []

    def answer(self, url: str, status: int | None = None, error: str | None = None) -> None:
        """What probing `url` gives from now on."""
        with self._lock:
            self._answers[url] = ProbeAnswer(status=status, error=error)

    def probe(self, url: str, timeout_seconds: float) -> ProbeAnswer:
        with self._lock:
            self.probed.append(url)
            return self._answers.get(url, ProbeAnswer(error="connection refused"))


class InMemoryAlertSource:
    """Alerts fire at a source URL when a test says so; a source URL never set up is
    unreachable, like a Prometheus that is not there."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._firing: dict[str, tuple[FiringAlert, ...]] = {}
        self._down: dict[str, str] = {}

    def serve(self, source_url: str, *alerts: FiringAlert) -> None:
        """`source_url` answers, with `alerts` firing."""
        with self._lock:
            self._firing[source_url] = alerts
            self._down.pop(source_url, None)

    def fail(self, source_url: str, reason: str) -> None:
        """`source_url` cannot be asked, for `reason`."""
        with self._lock:
            self._down[source_url] = reason

    def firing(
        self,
        source_url: str,
        matchers: Sequence[AlertMatcher],
        ignore: Sequence[str],
        timeout_seconds: float,
    ) -> tuple[FiringAlert, ...]:
        with self._lock:
            if source_url in self._down:
                raise AlertSourceError(f"{source_url}: {self._down[source_url]}")
            if source_url not in self._firing:
                raise AlertSourceError(f"{source_url}: connection refused")
            alerts = self._firing[source_url]
        held = matching_alerts(alerts, matchers, ignore)
        return tuple(sorted(held, key=lambda alert: alert.name))


_prober: type[HttpProber] = InMemoryHttpProber
_alerts: type[AlertSource] = InMemoryAlertSource
