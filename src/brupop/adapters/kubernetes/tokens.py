"""KubernetesTokenReviewer: `authentication.k8s.io/v1` TokenReviews with audiences.

The pod and node a projected service-account token is bound to come back in `user.extra`.
"""

from __future__ import annotations

from kubernetes.client import AuthenticationV1Api

from brupop.adapters.kubernetes.api_calls import JSON, ApiCalls
from brupop.domain.cluster.objects import TokenIdentity

EXTRA_PREFIX = "authentication.kubernetes.io/"


def identity_from_review(review: JSON) -> TokenIdentity:
    """What a TokenReview's status says about the token."""
    status = review.get("status") or {}
    user = status.get("user") or {}
    extra = user.get("extra") or {}
    return TokenIdentity(
        authenticated=bool(status.get("authenticated")),
        username=user.get("username") or None,
        audiences=tuple(status.get("audiences") or ()),
        pod_name=_single(extra, "pod-name"),
        pod_uid=_single(extra, "pod-uid"),
        node_name=_single(extra, "node-name"),
        error=status.get("error") or None,
    )


def _single(extra: JSON, key: str) -> str | None:
    """The one value of an extra field; None when absent or ambiguous (several values)."""
    values = extra.get(EXTRA_PREFIX + key) or []
    return str(values[0]) if isinstance(values, list) and len(values) == 1 else None


class KubernetesTokenReviewer:
    """The TokenReviewer port: one TokenReview per call (the apiserver caches)."""

    def __init__(self, calls: ApiCalls) -> None:
        self._calls = calls
        self._api = AuthenticationV1Api(calls.api_client)

    def review(self, token: str, audiences: tuple[str, ...]) -> TokenIdentity:
        body = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token, "audiences": list(audiences)},
        }
        answer = self._calls.json("review a bearer token", self._api.create_token_review, body)
        return identity_from_review(answer)
