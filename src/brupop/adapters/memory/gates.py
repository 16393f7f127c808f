"""In-memory stand-ins for what the controller's gates reach outside the cluster: HTTP probe
targets and an alert source, set up by tests and `brupop simulate`.

Both refuse what the real adapters refuse, with the same reasons (the contract suite in
tests/contract/gates holds them to it): a URL that is not http(s), credentials in a URL, and
whatever the AddressAllowance refuses (loopback, link-local, metadata, the API server), by name
and by address. A name resolves only through the `names` a test gives (like a DNS it
controls); a name it does not list is reached without a lookup.
"""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

from brupop.domain.policy.address_allowance import ALLOWANCE_SETTING, AddressAllowance, host_key
from brupop.domain.policy.alert_matcher import AlertMatcher
from brupop.domain.policy.probe_url import masked_url
from brupop.domain.safety.alert_gate import FiringAlert, matching_alerts
from brupop.domain.safety.gate_checks import ProbeAnswer
from brupop.ports.monitoring.alert_source import AlertSource, AlertSourceError
from brupop.ports.monitoring.http_prober import HttpProber

Names = Mapping[str, Sequence[str]]  # a host name and the addresses it resolves to


class Reach:
    """Where `allowance` lets a gate connect, names resolved through `names`."""

    def __init__(
        self, allowance: AddressAllowance | None = None, names: Names | None = None
    ) -> None:
        self._allowance = allowance if allowance is not None else AddressAllowance()
        self._names = {host_key(name): tuple(found) for name, found in (names or {}).items()}

    def refusal(self, url: str) -> str | None:
        """Why the real bounded GET would not connect for `url`; None when it would."""
        try:
            parts = urlsplit(url)
            _ = parts.port  # a port that is no number is refused here, as there
        except ValueError:
            return "not an http(s) URL"
        host = parts.hostname or ""
        if parts.scheme not in ("http", "https") or not host:
            return "not an http(s) URL"
        if "@" in parts.netloc:
            return "refused: credentials do not belong in the URL"
        allowance = self._allowance
        by_address = (allowance.address_refusal(host, a) for a in self._addresses(host))
        reason = allowance.name_refusal(host) or next((r for r in by_address if r), None)
        return None if reason is None else f"refused: {reason} (not allowed by {ALLOWANCE_SETTING})"

    def _addresses(self, host: str) -> tuple[str, ...]:
        """What `host` resolves to: an address itself, a name what `names` says."""
        try:
            return (str(ipaddress.ip_address(host)),)
        except ValueError:
            return self._names.get(host_key(host), ())


class InMemoryHttpProber:
    """Answers each URL with the status (or error) set for it; an unknown URL is refused, and
    so is one the address allowance refuses (`reach`; by default, the default refusals)."""

    def __init__(self, reach: Reach | None = None) -> None:
        self._lock = threading.Lock()
        self._reach = reach or Reach()
        self._answers: dict[str, ProbeAnswer] = {}
        self.probed: list[str] = []

    def answer(self, url: str, status: int | None = None, error: str | None = None) -> None:
        """What probing `url` gives from now on."""
        with self._lock:
            self._answers[url] = ProbeAnswer(status=status, error=error)

    def probe(self, url: str, timeout_seconds: float) -> ProbeAnswer:
        refusal = self._reach.refusal(url)
        with self._lock:
            self.probed.append(url)
            if refusal is not None:
                return ProbeAnswer(error=refusal)
            return self._answers.get(url, ProbeAnswer(error="connection refused"))


class InMemoryAlertSource:
    """Alerts fire at a source URL when a test says so; a source URL never set up is
    unreachable, like a Prometheus that is not there, and one the address allowance refuses
    (`reach`) is refused, set up or not."""

    def __init__(self, reach: Reach | None = None) -> None:
        self._lock = threading.Lock()
        self._reach = reach or Reach()
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
        refusal = self._reach.refusal(source_url)
        if refusal is not None:
            raise AlertSourceError(f"{masked_url(source_url)}: {refusal}")
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
