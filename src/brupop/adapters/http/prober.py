"""UrlProber: the HttpProber port over a bounded GET; the body is read up to a small cap and
thrown away, since only the status counts. A refused or failed probe is an answer with an
error (bounded, no controls), never an exception."""

from __future__ import annotations

from brupop.adapters.http.bounded_get import BoundedGet, BoundedGetError
from brupop.domain.safety.gate_checks import ProbeAnswer
from brupop.ports.monitoring.http_prober import HttpProber

PROBE_BODY_MAX_BYTES = 64 * 1024


class UrlProber:
    """Probes real URLs, where `http`'s address allowance allows."""

    def __init__(self, http: BoundedGet | None = None) -> None:
        self._http = http if http is not None else BoundedGet()

    def probe(self, url: str, timeout_seconds: float) -> ProbeAnswer:
        try:
            answer = self._http.get(url, timeout_seconds, limit=PROBE_BODY_MAX_BYTES)
        except BoundedGetError as error:
            return ProbeAnswer(error=str(error))
        return ProbeAnswer(status=answer.status)


_: HttpProber = UrlProber()
