"""TokenReview for the Kubernetes emulator: bound service-account tokens, answered as the
kube-apiserver answers `POST /apis/authentication.k8s.io/v1/tokenreviews`.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

JSON = dict[str, Any]
EXTRA = "authentication.kubernetes.io/"
DELETION_LEEWAY = timedelta(seconds=60)


@dataclass(frozen=True)
class _Grant:
    username: str
    audiences: tuple[str, ...]
    pod: JSON | None
    node: JSON | None


class TokenAuthority:
    """Issues tokens and reviews them; counts reviews like the in-memory reviewer does."""

    def __init__(self) -> None:
        self._grants: dict[str, _Grant] = {}
        self._lock = threading.Lock()
        self.review_count = 0
        self.pod_lookup: Any = None  # set by the emulator: (namespace, name) -> pod JSON | None

    def issue_for_pod(self, pod: JSON, node: JSON | None, audiences: tuple[str, ...]) -> str:
        meta = pod["metadata"]
        account = pod["spec"].get("serviceAccountName") or "default"
        username = f"system:serviceaccount:{meta['namespace']}:{account}"
        return self._remember(_Grant(username, audiences, pod, node))

    def issue_for_user(self, username: str, audiences: tuple[str, ...]) -> str:
        return self._remember(_Grant(username, audiences, None, None))

    def review(self, body: object) -> JSON:
        """The TokenReview with its status filled in, as `create` returns it."""
        with self._lock:
            self.review_count += 1
        review: JSON = dict(body) if isinstance(body, dict) else {}
        spec = review.get("spec") or {}
        token = spec.get("token", "")
        wanted = tuple(spec.get("audiences") or ())
        review.setdefault("apiVersion", "authentication.k8s.io/v1")
        review.setdefault("kind", "TokenReview")
        review["metadata"] = {"creationTimestamp": None}
        with self._lock:
            grant = self._grants.get(token)
        review["status"] = self._status(grant, wanted)
        return review

    def _status(self, grant: _Grant | None, wanted: tuple[str, ...]) -> JSON:
        if grant is None:
            return {
                "user": {},
                "error": "[invalid bearer token, square/go-jose: error in cryptographic primitive]",
            }
        shared = (
            [audience for audience in wanted if audience in grant.audiences]
            if wanted
            else list(grant.audiences)
        )
        if not shared:
            return {"user": {}, "error": "[invalid bearer token, token audiences are invalid]"}
        if grant.pod is not None and not self._pod_still_there(grant.pod):
            return {
                "user": {},
                "error": "[invalid bearer token, pod does not exist or was recreated]",
            }
        return {"authenticated": True, "user": self._user(grant), "audiences": shared}

    def _pod_still_there(self, pod: JSON) -> bool:
        """The pod is there with its UID, and not deleted more than kube-apiserver's 60 s
        leeway ago (a finalizer may hold it)."""
        if self.pod_lookup is None:
            return True
        meta = pod["metadata"]
        current = self.pod_lookup(meta["namespace"], meta["name"])
        if current is None or current["metadata"].get("uid") != meta.get("uid"):
            return False
        deleted = current["metadata"].get("deletionTimestamp")
        return not deleted or _parsed(deleted) >= datetime.now(UTC) - DELETION_LEEWAY

    @staticmethod
    def _user(grant: _Grant) -> JSON:
        user: JSON = {"username": grant.username, "uid": "3f6d1b1e-0000-4000-8000-000000000001"}
        if grant.pod is None:
            user["groups"] = ["system:authenticated"]
            return user
        namespace = grant.pod["metadata"]["namespace"]
        user["groups"] = [
            "system:serviceaccounts",
            f"system:serviceaccounts:{namespace}",
            "system:authenticated",
        ]
        extra = {
            f"{EXTRA}pod-name": [grant.pod["metadata"]["name"]],
            f"{EXTRA}pod-uid": [grant.pod["metadata"]["uid"]],
            f"{EXTRA}credential-id": [f"JTI={secrets.token_hex(8)}"],
        }
        if grant.node is not None:
            extra[f"{EXTRA}node-name"] = [grant.node["metadata"]["name"]]
            extra[f"{EXTRA}node-uid"] = [grant.node["metadata"]["uid"]]
        user["extra"] = extra
        return user

    def _remember(self, grant: _Grant) -> str:
        token = f"eyJhbGciOiJSUzI1NiJ9.{secrets.token_urlsafe(24)}"
        with self._lock:
            self._grants[token] = grant
        return token


def _parsed(timestamp: str) -> datetime:
    return datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
