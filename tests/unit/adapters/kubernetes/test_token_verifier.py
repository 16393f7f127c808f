"""KubernetesTokenVerifier and KubernetesIssuerKeys: what only a signed token can get wrong
(keys, issuer, algorithm, bindings), and a key set that refreshes on its own terms."""

from __future__ import annotations

import json
from typing import Any, cast

import jwt
import pytest
from kubernetes.client import ApiClient

from brupop.adapters.kubernetes.api.calls import ApiCalls
from brupop.adapters.kubernetes.tokens.issuer_keys import JWKS_PATH, KubernetesIssuerKeys
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import Pod
from brupop.ports.errors import UnavailableError
from brupop.services.apiserver.authorization.authorizer import AGENT_AUDIENCE, AGENT_SERVICE_ACCOUNT
from tests.contract.cluster.token_issuers import ISSUER, SigningIssuer
from tests.fakes.clock import FakeClock
from tests.unit.adapters.kubernetes.conftest import NS

AUDIENCES = (AGENT_AUDIENCE,)


def test_a_token_names_its_account_pod_and_node(signer: SigningIssuer, pod: Pod) -> None:
    identity = signer.verifier.review(signer.mint(pod), AUDIENCES)

    assert identity.authenticated
    assert identity.username == f"system:serviceaccount:{NS}:{AGENT_SERVICE_ACCOUNT}"
    assert (identity.pod_name, identity.pod_uid) == (pod.name, pod.uid)
    assert (identity.node_name, identity.node_uid) == ("n1", "uid-n1")


def test_a_token_signed_by_a_key_rotated_away_is_refused(signer: SigningIssuer, pod: Pod) -> None:
    old = signer.mint(pod)

    signer.rotate()

    assert not signer.verifier.review(old, AUDIENCES).authenticated
    assert signer.verifier.review(signer.mint(pod), AUDIENCES).authenticated


def test_a_token_with_a_forged_signature_is_refused(
    cluster: InMemoryCluster, signer: SigningIssuer, pod: Pod
) -> None:
    header, payload, _ = signer.mint(pod).split(".")
    other = SigningIssuer(cluster).mint(pod).split(".")[2]  # another key's signature

    assert not signer.verifier.review(f"{header}.{payload}.{other}", AUDIENCES).authenticated


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"iss": "https://someone-else"}, "not valid"),
        ({"sub": "system:serviceaccount:other:account"}, "subject"),
        ({"secret": True}, "secret"),
        ({"pod": None}, "not bound to a pod"),
        ({"iat": "future"}, "future"),
        ({"nbf": "future"}, "not valid yet"),
    ],
)
def test_a_token_that_is_not_a_pods_genuine_token_is_refused(
    signer: SigningIssuer, pod: Pod, change: dict[str, Any], why: str
) -> None:
    claims = signer.claims(pod)
    bound = claims["kubernetes.io"]
    for name, value in change.items():
        if name == "secret":
            bound["secret"] = {"name": "a-secret", "uid": "s-1"}
        elif name == "pod":
            del bound["pod"]
        elif value == "future":
            claims[name] = claims["iat"] + 3600
        else:
            claims[name] = value

    identity = signer.verifier.review(signer.sign(claims), AUDIENCES)

    assert not identity.authenticated
    assert why in (identity.error or "")


@pytest.mark.parametrize(
    "token",
    ["", "not-a-token", "a.b.c", "eyJhbGciOiJub25lIn0.e30.", "eyJhbGciOiJIUzI1NiJ9.e30.AAAA"],
)
def test_garbage_is_refused_before_any_key_is_looked_up(signer: SigningIssuer, token: str) -> None:
    identity = signer.verifier.review(token, AUDIENCES)

    assert not identity.authenticated
    assert signer.keys.lookups == 0


def test_a_token_with_an_unknown_key_id_is_refused(signer: SigningIssuer, pod: Pod) -> None:
    identity = signer.verifier.review(signer.sign(signer.claims(pod), kid="made-up"), AUDIENCES)

    assert not identity.authenticated
    assert "does not publish" in (identity.error or "")


# --- the key set ---------------------------------------------------------------------------


class FakeKubeApiserver:
    """Answers the discovery document and the key set, counting GETs; can be set to fail."""

    def __init__(self, jwks: dict[str, Any]) -> None:
        self.jwks = jwks
        self.gets: list[str] = []
        self.failing = False

    def call_api(self, path: str, method: str, **_options: Any) -> Any:
        self.gets.append(path)
        if self.failing:
            raise UnavailableError("kube-apiserver is down")
        body = self.jwks if path == JWKS_PATH else {"issuer": ISSUER, "jwks_uri": "x"}
        return type("Answer", (), {"data": json.dumps(body).encode()})()


def jwks_of(signer: SigningIssuer) -> dict[str, Any]:
    (kid,) = signer.keys.published
    key = jwt.algorithms.RSAAlgorithm.to_jwk(signer.keys.published[kid].key, as_dict=True) | {
        "kid": kid,
        "use": "sig",
        "alg": "RS256",
    }
    return {"keys": [key]}


@pytest.fixture
def served(signer: SigningIssuer) -> FakeKubeApiserver:
    return FakeKubeApiserver(jwks_of(signer))


def key_set(served: FakeKubeApiserver, clock: FakeClock) -> KubernetesIssuerKeys:
    calls = ApiCalls(cast(ApiClient, served))
    return KubernetesIssuerKeys(calls, clock, refresh_seconds=300, unknown_kid_seconds=30)


def test_made_up_key_ids_fetch_the_key_set_at_most_once_per_interval(
    served: FakeKubeApiserver,
) -> None:
    clock = FakeClock()
    keys = key_set(served, clock)
    keys.load()
    fetched = served.gets.count(JWKS_PATH)

    for n in range(100):
        assert keys.key(f"made-up-{n}") is None
    clock.advance(30)
    keys.key("made-up-again")

    assert served.gets.count(JWKS_PATH) == fetched + 1
    assert keys.issuer == ISSUER


def test_the_key_set_is_fetched_again_after_its_period_and_kept_when_that_fails(
    served: FakeKubeApiserver, signer: SigningIssuer
) -> None:
    clock = FakeClock()
    keys = key_set(served, clock)
    keys.load()
    (kid,) = signer.keys.published

    clock.advance(301)
    served.failing = True

    assert keys.key(kid) is not None
    assert served.gets[-1] == "/.well-known/openid-configuration"


def test_without_any_key_set_a_fetch_failure_is_unavailable(served: FakeKubeApiserver) -> None:
    served.failing = True
    keys = key_set(served, FakeClock())

    with pytest.raises(UnavailableError):
        keys.key("any")


def test_a_refresh_fetches_only_a_due_key_set_and_a_withdrawn_key_raises_the_generation(
    served: FakeKubeApiserver, signer: SigningIssuer
) -> None:
    clock = FakeClock()
    keys = key_set(served, clock)
    keys.load()
    fetched = served.gets.count(JWKS_PATH)
    keys.refresh()  # not due yet
    old = jwks_of(signer)["keys"]
    signer.rotate()
    served.jwks = {"keys": old + jwks_of(signer)["keys"]}  # a key added: nothing withdrawn
    clock.advance(301)
    keys.refresh()
    added_generation = keys.generation
    served.jwks = jwks_of(signer)  # the old key withdrawn
    clock.advance(301)
    keys.refresh()

    assert served.gets.count(JWKS_PATH) == fetched + 2
    assert added_generation == 0
    assert keys.generation == 1
