"""Tokens signed by the real issuer's key whose `exp`, `nbf` or `iat` is not a time from 1970 to
the year 9999 are refused with 401 by local verification, as they are by TokenReview where
kube-apiserver refuses them too: never accepted, never a 500.

A real TokenRequest token of an agent pod gives the claims and the key ID; the test re-signs
them, changed, with the control plane's service-account signing key (DIR/pki), so the
signature, issuer, audience and pod binding are kube-apiserver's own. Unchanged, the re-signed
token is accepted: that proves it is the time alone that is refused.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
from kubernetes import client

from brupop.adapters.kubernetes.tokens.token_verifier import LATEST_TIME
from brupop.services.apiserver.authorization.authorizer import AGENT_AUDIENCE
from tests.realcluster.conftest import ControlPlane
from tests.realcluster.test_token_verification import (
    Apiserver,
    agent_pod,
    start_apiserver,
    token_of,
)
from tests.support.control_plane.pki import Pki


@pytest.fixture
def apiserver(
    control_plane: ControlPlane, namespace: str, fake_node: str, tmp_path: Path
) -> Iterator[Apiserver]:
    yield from start_apiserver(control_plane, namespace, fake_node, tmp_path, cache_seconds=0)


def resigned(plane: ControlPlane, token: str, **changed: Any) -> str:
    """`token` with `changed` claims, signed again with the issuer's key and key ID."""
    header = jwt.get_unverified_header(token)
    claims = jwt.decode(token, options={"verify_signature": False}) | changed
    pem = Pki(plane.folder / "pki").service_account_key.read_bytes()
    return jwt.encode(claims, pem, algorithm=header["alg"], headers={"kid": header["kid"]})


def token_review_accepts(plane: ControlPlane, token: str) -> bool:
    review = client.V1TokenReview(
        spec=client.V1TokenReviewSpec(token=token, audiences=[AGENT_AUDIENCE])
    )
    answer = client.AuthenticationV1Api(plane.api).create_token_review(review)
    return bool(answer.status.authenticated)


def test_the_issuers_token_signed_again_unchanged_is_accepted(
    control_plane: ControlPlane, apiserver: Apiserver
) -> None:
    pod = agent_pod(control_plane, apiserver.namespace, "brupop-agent-a", apiserver.node)

    token = resigned(control_plane, token_of(control_plane, pod))

    assert apiserver.status(token) == 200
    assert token_review_accepts(control_plane, token)


# (claim, value, whether kube-apiserver's TokenReview refuses it too)
TIMES = [
    ("exp", 1e300, True),
    ("exp", math.inf, True),
    ("exp", math.nan, True),
    ("exp", LATEST_TIME + 86_400, False),
    ("nbf", math.nan, True),
    ("nbf", math.inf, True),
    ("iat", math.nan, True),
    ("iat", -5, False),
]


@pytest.mark.parametrize(
    ("claim", "value", "review_refuses"), TIMES, ids=[f"{c}={v}" for c, v, _ in TIMES]
)
def test_an_issuer_signed_token_whose_time_is_not_a_date_is_refused_with_401(
    control_plane: ControlPlane,
    apiserver: Apiserver,
    claim: str,
    value: float,
    review_refuses: bool,
) -> None:
    pod = agent_pod(control_plane, apiserver.namespace, "brupop-agent-a", apiserver.node)
    token = resigned(control_plane, token_of(control_plane, pod), **{claim: value})

    assert apiserver.status(token) == 401
    assert token_review_accepts(control_plane, token) is not review_refuses
