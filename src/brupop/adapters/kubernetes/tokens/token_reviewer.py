"""KubernetesTokenReviewer: `authentication.k8s.io/v1` TokenReviews with audiences.

The pod and node a projected service-account token is bound to come back in `user.extra`.
"""

from __future__ import annotations

from kubernetes.client import AuthenticationV1Api

from brupop.adapters.kubernetes.api.calls import JSON, ApiCalls
from brupop.adapters.kubernetes.api.decoding import mapping, reads, text_or_none
from brupop.domain.cluster.objects import TokenIdentity

EXTRA_PREFIX = "authentication.kubernetes.io/"


@reads("TokenReview")
def identity_from_review(review: JSON) -> TokenIdentity:
    """What a TokenReview's status says about the token; only a literal `true` authenticates."""
    status = mapping(review.get("status"))
    user = mapping(status.get("user"))
    extra = mapping(user.get("extra"))
    audiences = status.get("audiences")
    return TokenIdentity(
        authenticated=status.get("authenticated") is True,
        username=text_or_none(user.get("username")),
        audiences=tuple(a for a in audiences if isinstance(a, str))
        if isinstance(audiences, list)
        else (),
        pod_name=_single(extra, "pod-name"),
        pod_uid=_single(extra, "pod-uid"),
        node_name=_single(extra, "node-name"),
        error=text_or_none(status.get("error")),
    )


def _single(extra: JSON, key: str) -> str | None:
    """The one value of an extra field; None when absent or ambiguous (several values)."""
    values = extra.get(EXTRA_PREFIX + key) or []
    if isinstance(values, list) and len(values) == 1:
        return text_or_none(values[0])
    return None


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
