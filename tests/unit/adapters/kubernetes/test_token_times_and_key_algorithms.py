"""Local token verification on what the issuer's side could get wrong: a key set entry whose
algorithm is not a signing one is left out with one WARN (the other keys still load), and a
signed token whose `exp`, `nbf` or `iat` is not a time from 1970 to the year 9999 (NaN,
infinities, 1e300, negative) is refused, never accepted and never an exception."""

from __future__ import annotations

import functools
import json
import math
from typing import Any, cast

import jwt
import pytest
import structlog
from hypothesis import given, settings
from hypothesis import strategies as st
from kubernetes.client import ApiClient

from brupop.adapters.kubernetes.api.calls import ApiCalls
from brupop.adapters.kubernetes.tokens.issuer_keys import (
    JWKS_PATH,
    SIGNING_ALGORITHMS,
    KubernetesIssuerKeys,
    key_set_of,
)
from brupop.adapters.kubernetes.tokens.token_verifier import LATEST_TIME, KubernetesTokenVerifier
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import Pod
from brupop.ports.errors import UnavailableError
from brupop.services.apiserver.authorization.authorizer import AGENT_AUDIENCE, AGENT_SERVICE_ACCOUNT
from tests.contract.cluster.token_issuers import ISSUER, SigningIssuer
from tests.fakes.clock import FakeClock
from tests.support.outside_input import outside_json
from tests.unit.adapters.kubernetes.conftest import NS

AUDIENCES = (AGENT_AUDIENCE,)
RSA_MODULUS = "AQAB"  # too small a key: PyJWK refuses it, which is beside the point here


@functools.cache
def _one_signer() -> tuple[SigningIssuer, Pod]:
    """One issuer and pod for every hypothesis example (a key takes a while to make)."""
    cluster = InMemoryCluster(NS, clock=FakeClock())
    cluster.add_node("n1", uid="uid-n1")
    pod = cluster.add_pod(NS, "agent-n1", "n1", service_account=AGENT_SERVICE_ACCOUNT)
    return SigningIssuer(cluster), pod


# --- times ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "value"),
    [
        ("exp", 1e300),
        ("exp", math.inf),
        ("exp", math.nan),
        ("exp", 10**400),
        ("exp", LATEST_TIME + 1),
        ("exp", -1),
        ("nbf", math.nan),
        ("nbf", -math.inf),
        ("nbf", -1),
        ("nbf", 1e300),
        ("iat", math.nan),
        ("iat", -5),
        ("iat", -math.inf),
    ],
)
def test_a_signed_token_whose_time_is_not_a_date_is_refused_naming_the_claim(
    signer: SigningIssuer, pod: Pod, claim: str, value: float
) -> None:
    claims = signer.claims(pod)
    claims[claim] = value

    identity = signer.verifier.review(signer.sign(claims), AUDIENCES)

    assert not identity.authenticated
    assert f"the token's {claim} is not a time" in (identity.error or "")


def test_a_token_that_expires_at_the_end_of_year_9999_is_accepted(
    signer: SigningIssuer, pod: Pod
) -> None:
    claims = signer.claims(pod)
    claims["exp"] = LATEST_TIME

    identity = signer.verifier.review(signer.sign(claims), AUDIENCES)

    assert identity.authenticated
    assert identity.expires_at is not None and identity.expires_at.year == 9999


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["exp", "nbf", "iat"]),
    st.one_of(outside_json(4, deep=False), st.floats(), st.integers(-(10**30), 10**30)),
)
def test_any_time_claim_is_judged_without_an_exception(claim: str, value: Any) -> None:
    signer, pod = _one_signer()
    claims = signer.claims(pod)
    claims[claim] = value

    identity = signer.verifier.review(signer.sign(claims), AUDIENCES)

    if identity.authenticated:
        assert isinstance(value, int | float) and 0 <= value <= LATEST_TIME


# --- key algorithms ------------------------------------------------------------------------


class ServedKeySet:
    """kube-apiserver's discovery document and key set, as a fake ApiClient answers them."""

    def __init__(self, jwks: dict[str, Any]) -> None:
        self.jwks = jwks

    def call_api(self, path: str, method: str, **_options: Any) -> Any:
        body = self.jwks if path == JWKS_PATH else {"issuer": ISSUER, "jwks_uri": "x"}
        return type("Answer", (), {"data": json.dumps(body).encode()})()


def published_entry(signer: SigningIssuer) -> dict[str, Any]:
    """The signer's public key as kube-apiserver publishes it."""
    ((kid, key),) = signer.keys.published.items()
    entry: dict[str, Any] = jwt.algorithms.RSAAlgorithm.to_jwk(key.key, as_dict=True)
    return entry | {"kid": kid, "use": "sig", "alg": "RS256"}


def not_signing_entries(signer: SigningIssuer) -> list[dict[str, Any]]:
    """Entries that are not signing keys: `none`, unknown, symmetric, a non-text `alg`."""
    good = published_entry(signer)
    return [
        good | {"kid": "none-key", "alg": "none"},
        good | {"kid": "unknown-key", "alg": "XS999"},
        good | {"kid": "listed-alg", "alg": ["RS256"]},
        {"kty": "oct", "k": "c2VjcmV0", "kid": "hmac-key", "use": "sig"},  # HS256 by its kty
    ]


def key_set(jwks: dict[str, Any], clock: FakeClock) -> KubernetesIssuerKeys:
    return KubernetesIssuerKeys(ApiCalls(cast(ApiClient, ServedKeySet(jwks))), clock)


def test_entries_that_are_not_signing_keys_are_left_out_with_one_warning(
    cluster: InMemoryCluster, signer: SigningIssuer, pod: Pod
) -> None:
    clock = FakeClock()
    jwks = {"keys": [*not_signing_entries(signer), published_entry(signer)]}
    keys = key_set(jwks, clock)
    verifier = KubernetesTokenVerifier(keys, cluster.clock)

    with structlog.testing.capture_logs() as lines:
        keys.load()
        clock.advance(301)
        keys.refresh()  # fetched again: the same entries left out, nothing new to say

    assert verifier.review(signer.mint(pod), AUDIENCES).authenticated
    (warned,) = [line for line in lines if line["event"] == "authorization.issuer_keys_skipped"]
    assert warned["log_level"] == "warning"
    skipped = " ".join(warned["skipped"])
    for kid in ("none-key", "unknown-key", "listed-alg", "hmac-key"):
        assert kid in skipped
    assert "'none' is not one tokens are signed with" in skipped
    assert "'HS256' is not one tokens are signed with" in skipped


def test_a_key_set_of_none_but_non_signing_keys_is_unavailable_not_a_crash(
    signer: SigningIssuer,
) -> None:
    keys = key_set({"keys": not_signing_entries(signer)}, FakeClock())

    with pytest.raises(UnavailableError, match="no key this apiserver can use"):
        keys.load()


JWK_FIELDS = st.sampled_from(["kty", "alg", "kid", "use", "n", "e", "crv", "x", "y", "k", "d"])
JWK_VALUES = st.one_of(
    st.sampled_from(["RSA", "EC", "oct", "OKP", "P-256", "Ed25519", "none", "sig", RSA_MODULUS]),
    st.sampled_from(sorted(SIGNING_ALGORITHMS | {"HS256", "EdDSA", "PS256", "none"})),
    outside_json(3, deep=False),
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(st.dictionaries(JWK_FIELDS, JWK_VALUES), outside_json(3, deep=False)), max_size=6
    )
)
def test_any_key_set_document_gives_signing_keys_or_reasons_without_an_exception(
    entries: list[Any],
) -> None:
    found = key_set_of({"keys": entries})

    assert all(key.algorithm_name in SIGNING_ALGORITHMS for key in found.keys.values())
    assert all(len(reason) < 300 for reason in found.skipped)
