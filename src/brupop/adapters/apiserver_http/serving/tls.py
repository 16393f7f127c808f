"""Serving TLS whose certificate is renewed without a restart.

uvicorn gets one SSLContext whose SNI callback hands each new connection the context loaded
from the current files; the files are checked at most every few seconds, and a pair that does
not load (mid-rotation) keeps the previous certificate in service.
"""

from __future__ import annotations

import hashlib
import ssl
import threading
import time
from collections.abc import Callable
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)


class CertificateReloader:
    """Loads the certificate and key, and swaps in a fresh context when the files change."""

    def __init__(
        self,
        certfile: Path,
        keyfile: Path,
        *,
        check_seconds: float = 5.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._certfile = certfile
        self._keyfile = keyfile
        self._check_seconds = check_seconds
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._fingerprint = self._fingerprint_now()
        self._current = self._load()
        self._checked_at = monotonic()
        self._base = self._load()
        self._base.sni_callback = self._choose_context
        self.reloads = 0

    def server_context(self) -> ssl.SSLContext:
        """The context to give the server; connections are switched to the newest certificate."""
        return self._base

    def current(self) -> ssl.SSLContext:
        """The context of the newest certificate that loaded, checking the files if it is time."""
        with self._lock:
            now = self._monotonic()
            if now - self._checked_at >= self._check_seconds:
                self._checked_at = now
                self._reload_if_changed()
            return self._current

    def _choose_context(
        self, connection: ssl.SSLObject | ssl.SSLSocket, _server_name: str | None, _ctx: object
    ) -> None:
        connection.context = self.current()

    def _reload_if_changed(self) -> None:
        try:
            fingerprint = self._fingerprint_now()
            if fingerprint == self._fingerprint:
                return
            context = self._load()
        except (OSError, ssl.SSLError) as error:
            log.warning("tls.reload_failed", error=str(error))
            return
        self._fingerprint = fingerprint
        self._current = context
        self.reloads += 1
        log.info("tls.certificate_reloaded", certfile=str(self._certfile))

    def _fingerprint_now(self) -> str:
        digest = hashlib.sha256(self._certfile.read_bytes())
        digest.update(self._keyfile.read_bytes())
        return digest.hexdigest()

    def _load(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(self._certfile, self._keyfile)
        return context
