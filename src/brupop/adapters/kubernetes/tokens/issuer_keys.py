"""KubernetesIssuerKeys: the service-account issuer's public keys, read from kube-apiserver.

The issuer comes from `/.well-known/openid-configuration`; the keys from
kube-apiserver's `/openid/v1/jwks`, which serves the same set whatever `jwks_uri` names, fetched
with the apiserver's own credentials (the default `system:service-account-issuer-discovery`
binding lets every service account read both). The set is fetched again every
`refresh_seconds`, and on a key ID it does not hold, at most once per `unknown_kid_seconds`:
made-up key IDs cannot make the apiserver hammer kube-apiserver.

Only keys of the algorithms service-account tokens are signed with are kept; any other entry
(`"alg": "none"`, an unknown or symmetric algorithm, a key that cannot be read) is left out and
named in one WARN line, again only when the set of entries left out changes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import jwt
import structlog

from brupop.adapters.kubernetes.api.calls import JSON, ApiCalls
from brupop.ports.clock import Clock
from brupop.ports.errors import PortError, UnavailableError

DISCOVERY_PATH = "/.well-known/openid-configuration"
JWKS_PATH = "/openid/v1/jwks"
MAX_KEYS = 16
"""Keys kept from one set: kube-apiserver publishes one per --service-account-key-file."""
MAX_ENTRIES = 4 * MAX_KEYS
"""Entries of one set looked at; the rest are ignored."""
SIGNING_ALGORITHMS = frozenset({"RS256", "RS384", "RS512", "ES256", "ES384", "ES512"})
"""What kube-apiserver signs service-account tokens with (an RSA or an ECDSA key)."""
_NAME_CHARS = 64  # of a key ID or an algorithm quoted in the log

log = structlog.get_logger(__name__)


class KubernetesIssuerKeys:
    """The issuer and its keys by key ID; thread-safe, one fetch at a time."""

    def __init__(
        self,
        calls: ApiCalls,
        clock: Clock,
        *,
        refresh_seconds: float = 300.0,
        unknown_kid_seconds: float = 30.0,
    ) -> None:
        self._calls = calls
        self._clock = clock
        self._issuer: str | None = None
        self._refresh_seconds = refresh_seconds
        self._unknown_kid_seconds = unknown_kid_seconds
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched_at: float | None = None
        self._tried_at: float | None = None
        self._fetching = threading.Lock()
        self._skipped: frozenset[str] = frozenset()  # the entries the last fetch left out
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
        issuer = self._get("read the service-account issuer", DISCOVERY_PATH).get("issuer")
        if not isinstance(issuer, str) or not issuer:
            raise UnavailableError("the OpenID discovery document names no issuer")
        self._issuer = issuer
        found = key_set_of(self._get("read the service-account issuer's keys", JWKS_PATH))
        self._tell_skipped(frozenset(found.skipped))
        keys = found.keys
        if not keys:
            raise UnavailableError("the issuer publishes no key this apiserver can use")
        if set(keys) != set(self._keys):
            log.info("authorization.issuer_keys", keys=sorted(keys), issuer=self._issuer)
        if set(self._keys) - set(keys):
            self.generation += 1
        self._keys = keys
        self._fetched_at = self._tried_at

    def _tell_skipped(self, skipped: frozenset[str]) -> None:
        """One WARN when the set leaves out entries it did not leave out at the last fetch."""
        if skipped - self._skipped:
            log.warning(
                "authorization.issuer_keys_skipped", skipped=sorted(skipped), issuer=self._issuer
            )
        self._skipped = skipped

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


@dataclass(frozen=True)
class KeySet:
    """The usable signing keys of a JWKS document by key ID, and why each entry that is not one
    was left out."""

    keys: dict[str, jwt.PyJWK]
    skipped: tuple[str, ...]


def key_set_of(document: JSON) -> KeySet:
    """The signing keys of the first MAX_ENTRIES entries (at most MAX_KEYS); an entry for
    another use (`"use": "enc"`) is passed over, any other that is not a usable signing key
    with an ID is left out with the reason."""
    found: dict[str, jwt.PyJWK] = {}
    skipped: list[str] = []
    entries = document.get("keys")
    for entry in entries[:MAX_ENTRIES] if isinstance(entries, list) else []:
        if len(found) >= MAX_KEYS:
            break
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
            continue
        kid = entry.get("kid")
        named = f"key {_quoted(kid)}"
        key, problem = _signing_key(entry)
        if key is None:
            skipped.append(f"{named}: {problem}")
        elif not isinstance(kid, str) or not kid:
            skipped.append(f"{named}: no key ID")
        else:
            found[kid] = key
    return KeySet(found, tuple(skipped))


def keys_of(document: JSON) -> dict[str, jwt.PyJWK]:
    """The usable signing keys of a JWKS document by key ID (see key_set_of)."""
    return key_set_of(document).keys


def _signing_key(entry: dict[str, Any]) -> tuple[jwt.PyJWK | None, str]:
    """The entry as a key of a SIGNING_ALGORITHMS algorithm, or None and why it is not one."""
    declared = entry.get("alg")
    if declared is not None and (
        not isinstance(declared, str) or declared not in SIGNING_ALGORITHMS
    ):
        return None, f"algorithm {_quoted(declared)} is not one tokens are signed with"
    try:
        key = jwt.PyJWK(entry)
    except (jwt.PyJWTError, ValueError, TypeError, KeyError, NotImplementedError) as error:
        return None, f"cannot be read ({type(error).__name__})"
    if key.algorithm_name not in SIGNING_ALGORITHMS:
        return None, f"algorithm {_quoted(key.algorithm_name)} is not one tokens are signed with"
    return key, ""


def _quoted(value: object) -> str:
    """A value from the document, quoted and cut short for the log (a container by its type)."""
    if value is None or isinstance(value, str | int | float):
        return repr(value[:_NAME_CHARS] if isinstance(value, str) else value)[:_NAME_CHARS]
    return f"<{type(value).__name__}>"
