"""KubernetesTokenVerifier: a projected service-account token checked here, as kube-apiserver's
TokenReview would: signature by a key the issuer publishes, `iss`, `aud`, `exp`/`nbf`/`iat` (on
the Clock, with a small leeway; each a number of seconds from 1970 to the end of year 9999, else
the token is refused), and a pod binding (a token bound to a secret, or to nothing, is refused).
Whether the pod still exists is for the pod mirror to say.

Garbage fails fast: anything that is not a JWS with a known algorithm and key ID is refused
before any signature is checked.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Protocol

import jwt

from brupop.adapters.kubernetes.tokens.issuer_keys import SIGNING_ALGORITHMS
from brupop.domain.cluster.objects import TokenIdentity
from brupop.ports.clock import Clock
from brupop.ports.errors import UnavailableError

ALGORITHMS = SIGNING_ALGORITHMS
LEEWAY_SECONDS = 10.0
LATEST_TIME = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()
REQUIRED = ["iss", "sub", "aud", "exp", "iat"]


class IssuerKeys(Protocol):
    """The issuer and its public keys (KubernetesIssuerKeys)."""

    @property
    def issuer(self) -> str | None: ...

    @property
    def generation(self) -> int: ...

    def load(self) -> None: ...

    def refresh(self) -> None: ...

    def key(self, kid: str) -> jwt.PyJWK | None: ...


class TokenRefused(Exception):
    """Why a token is not accepted (becomes an `authenticated=False` identity)."""


class KubernetesTokenVerifier:
    """The TokenVerifier port over the issuer's keys."""

    def __init__(
        self, keys: IssuerKeys, clock: Clock, *, leeway_seconds: float = LEEWAY_SECONDS
    ) -> None:
        self._keys = keys
        self._clock = clock
        self._leeway = leeway_seconds

    def load_keys(self) -> None:
        self._keys.load()

    def refresh_keys(self) -> None:
        self._keys.refresh()

    @property
    def keys_generation(self) -> int:
        return self._keys.generation

    def review(self, token: str, audiences: tuple[str, ...]) -> TokenIdentity:
        try:
            claims = self._verified_claims(token, audiences)
            return self._identity(claims, audiences)
        except TokenRefused as refusal:
            return TokenIdentity(authenticated=False, error=str(refusal))

    def _verified_claims(self, token: str, audiences: tuple[str, ...]) -> dict[str, Any]:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise TokenRefused("the token is not a signed JWT") from None
        algorithm, kid = header.get("alg"), header.get("kid")
        if algorithm not in ALGORITHMS or not isinstance(kid, str):
            raise TokenRefused("the token is not signed the way the issuer signs")
        key = self._keys.key(kid)
        issuer = self._keys.issuer
        if issuer is None:
            raise UnavailableError("the service-account issuer is not known yet")
        if key is None:
            raise TokenRefused("the token is signed by a key the issuer does not publish")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[str(algorithm)],
                audience=list(audiences),
                issuer=issuer,
                options={
                    "require": REQUIRED,
                    "verify_exp": False,  # checked on the Clock below
                    "verify_nbf": False,
                    "verify_iat": False,
                },
            )
        except jwt.InvalidAudienceError:
            raise TokenRefused("token audiences do not match") from None
        except jwt.PyJWTError as error:
            raise TokenRefused(f"the token is not valid: {error}") from None
        self._check_times(claims)
        return claims

    def _check_times(self, claims: dict[str, Any]) -> None:
        now = self._clock.now().timestamp()
        expiry, issued = _time(claims, "exp"), _time(claims, "iat")
        not_before = _time(claims, "nbf") if "nbf" in claims else issued
        if now - self._leeway >= expiry:
            raise TokenRefused("the token has expired")
        if now + self._leeway < not_before:
            raise TokenRefused("the token is not valid yet")
        if now + self._leeway < issued:
            raise TokenRefused("the token was issued in the future")

    def _identity(self, claims: dict[str, Any], audiences: tuple[str, ...]) -> TokenIdentity:
        kubernetes = _mapping(claims.get("kubernetes.io"))
        if "secret" in kubernetes:
            raise TokenRefused("the token is bound to a secret, not a pod")
        pod = _mapping(kubernetes.get("pod"))
        account = _mapping(kubernetes.get("serviceaccount"))
        pod_name, pod_uid = _text(pod.get("name")), _text(pod.get("uid"))
        if pod_name is None or pod_uid is None:
            raise TokenRefused("the token is not bound to a pod")
        username = f"system:serviceaccount:{kubernetes.get('namespace')}:{account.get('name')}"
        if claims.get("sub") != username:
            raise TokenRefused("the token's subject is not its service account")
        node = _mapping(kubernetes.get("node"))
        granted = claims.get("aud")
        token_audiences = granted if isinstance(granted, list) else [granted]
        return TokenIdentity(
            authenticated=True,
            username=username,
            audiences=tuple(a for a in audiences if a in token_audiences),
            pod_name=pod_name,
            pod_uid=pod_uid,
            node_name=_text(node.get("name")),
            node_uid=_text(node.get("uid")),
            service_account_uid=_text(account.get("uid")),
            expires_at=datetime.fromtimestamp(_time(claims, "exp"), UTC),
        )


def _time(claims: dict[str, Any], name: str) -> float:
    """A numeric date claim (seconds since the epoch); TokenRefused unless it is a finite number
    from 0 to LATEST_TIME (NaN, infinities, 1e300 and negative times are not dates)."""
    value = claims.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TokenRefused(f"the token's {name} is not a number")
    if not 0 <= value <= LATEST_TIME:  # False for NaN too
        raise TokenRefused(f"the token's {name} is not a time from 1970 to the year 9999")
    return float(value)


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
