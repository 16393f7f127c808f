"""KubernetesIssuerKeys: the service-account issuer's public keys, read from kube-apiserver.

The issuer comes from `/.well-known/openid-configuration` (or is given); the keys from
kube-apiserver's `/openid/v1/jwks`, which serves the same set whatever `jwks_uri` names, fetched
with the apiserver's own credentials (the default `system:service-account-issuer-discovery`
binding lets every service account read both). The set is fetched again every
`refresh_seconds`, and on a key ID it does not hold, at most once per `unknown_kid_seconds`:
made-up key IDs cannot make the apiserver hammer kube-apiserver.
"""

from __future__ import annotations

import threading
from typing import Any

import jwt
import structlog

from brupop.adapters.kubernetes.api_calls import JSON, ApiCalls
from brupop.ports.clock import Clock
from brupop.ports.errors import PortError, UnavailableError

DISCOVERY_PATH = "/.well-known/openid-configuration"
JWKS_PATH = "/openid/v1/jwks"
MAX_KEYS = 16
"""Keys kept from one set: kube-apiserver publishes one per --service-account-key-file."""

log = structlog.get_logger(__name__)


class KubernetesIssuerKeys:
    """The issuer and its keys by key ID; thread-safe, one fetch at a time."""

    def __init__(
        self,
        calls: ApiCalls,
        clock: Clock,
        *,
        issuer: str | None = None,
        refresh_seconds: float = 300.0,
        unknown_kid_seconds: float = 30.0,
    ) -> None:
        self._calls = calls
        self._clock = clock
        self._given_issuer = issuer
        self._issuer: str | None = issuer
        self._refresh_seconds = refresh_seconds
        self._unknown_kid_seconds = unknown_kid_seconds
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched_at: float | None = None
        self._tried_at: float | None = None
        self._fetching = threading.Lock()
        self.generation = 0  # grows when a fetch finds a key withdrawn

    @property
    def issuer(self) -> str | None:
        """The issuer a token's `iss` must equal (None before the first fetch)."""
        return self._issuer

    def load(self) -> None:
        """Fetch the issuer and its keys now; UnavailableError when either cannot be had."""
        with self._fetching:
            self._fetch()

    def key(self, kid: str) -> jwt.PyJWK | None:
        """The key with ID `kid`, fetching the set again when it is old or lacks that ID.

        UnavailableError when no set was ever fetched and fetching fails now."""
        self._fetch_if(self._keys.get(kid) is None)
        return self._keys.get(kid)

    def refresh(self) -> None:
        """Fetch the set again if it is older than `refresh_seconds`; keep it on failure."""
        if self._fetched_at is not None:
            self._fetch_if(False)

    def _fetch_if(self, unknown_kid: bool) -> None:
        now = self._clock.monotonic()
        stale = self._fetched_at is None or now - self._fetched_at >= self._refresh_seconds
        may_retry = self._tried_at is None or now - self._tried_at >= self._unknown_kid_seconds
        if (stale or unknown_kid) and may_retry and self._fetching.acquire(blocking=False):
            try:
                self._fetch()
            except PortError as error:
                if self._fetched_at is None:
                    raise
                log.warning("authorization.issuer_keys_refresh_failed", error=str(error))
            finally:
                self._fetching.release()

    def _fetch(self) -> None:
        self._tried_at = self._clock.monotonic()
        if self._given_issuer is None:
            issuer = self._get("read the service-account issuer", DISCOVERY_PATH).get("issuer")
            if not isinstance(issuer, str) or not issuer:
                raise UnavailableError("the OpenID discovery document names no issuer")
            self._issuer = issuer
        keys = keys_of(self._get("read the service-account issuer's keys", JWKS_PATH))
        if not keys:
            raise UnavailableError("the issuer publishes no key this apiserver can use")
        if set(keys) != set(self._keys):
            log.info("authorization.issuer_keys", keys=sorted(keys), issuer=self._issuer)
        if set(self._keys) - set(keys):
            self.generation += 1
        self._keys = keys
        self._fetched_at = self._tried_at

    def _get(self, action: str, path: str) -> JSON:
        """GET `path` of kube-apiserver as JSON (the key set answers only to its own media
        type, `application/jwk-set+json`; 406 to a plain `application/json`)."""
        api = self._calls.api_client

        def get(**options: Any) -> Any:
            return api.call_api(
                path,
                "GET",
                header_params={"Accept": "application/jwk-set+json, application/json"},
                auth_settings=["BearerToken"],
                _return_http_data_only=True,
                **options,
            )

        return self._calls.json(action, get)


def keys_of(document: JSON) -> dict[str, jwt.PyJWK]:
    """The usable signing keys of a JWKS document by key ID (at most MAX_KEYS); a key that is
    not a signing key, has no ID or cannot be read is left out."""
    found: dict[str, jwt.PyJWK] = {}
    entries = document.get("keys")
    for entry in entries if isinstance(entries, list) else []:
        if len(found) >= MAX_KEYS:
            break
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
            continue
        kid = entry.get("kid")
        try:
            key = jwt.PyJWK(entry)
        except (jwt.PyJWTError, ValueError, TypeError, KeyError):
            continue
        if isinstance(kid, str) and kid:
            found[kid] = key
    return found
