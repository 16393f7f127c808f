"""The two TokenVerifiers the local-verification suite runs against, each with its issuer:
the in-memory cluster's fake (opaque tokens it remembers) and KubernetesTokenVerifier over a
key set held here, with tokens signed here the way kube-apiserver signs projected tokens."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

from brupop.adapters.kubernetes.tokens.issuer_keys import keys_of
from brupop.adapters.kubernetes.tokens.token_verifier import KubernetesTokenVerifier
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import Pod
from brupop.ports.tokens.token_verifier import TokenVerifier
from brupop.services.apiserver.authorization.authorizer import AGENT_AUDIENCE

ISSUER = "https://kubernetes.default.svc.cluster.local"


class TokenIssuer(Protocol):
    """A verifier and the means to mint tokens it should accept or refuse."""

    name: str
    verifier: TokenVerifier

    def mint(self, pod: Pod, audience: str = AGENT_AUDIENCE, seconds: float = 600) -> str: ...

    def withdraw(self, token: str) -> None:
        """Withdraw the key `token` was signed with (a rotation, as the verifier learns it)."""
        ...


class MemoryIssuer:
    name = "memory"

    def __init__(self, cluster: InMemoryCluster) -> None:
        self._cluster = cluster
        self.verifier: TokenVerifier = cluster.token_verifier

    def mint(self, pod: Pod, audience: str = AGENT_AUDIENCE, seconds: float = 600) -> str:
        return self._cluster.issue_token(
            pod.namespace, pod.name, audiences=(audience,), ttl_seconds=seconds
        )

    def withdraw(self, token: str) -> None:
        self._cluster.token_verifier.withdraw(token)


@dataclass
class HeldKeys:
    """IssuerKeys over keys held in memory; `publish` replaces them (a rotation)."""

    issuer: str | None = ISSUER
    published: dict[str, jwt.PyJWK] = field(default_factory=dict)
    lookups: int = 0
    generation: int = 0

    def load(self) -> None:
        return None

    def refresh(self) -> None:
        return None

    def publish(self, keys: dict[str, jwt.PyJWK]) -> None:
        """Serve only `keys`, as a fetch of the key set finds them."""
        if set(self.published) - set(keys):
            self.generation += 1
        self.published = keys

    def key(self, kid: str) -> jwt.PyJWK | None:
        self.lookups += 1
        return self.published.get(kid)


class SigningIssuer:
    """kube-apiserver's token signer in miniature: RS256, a key ID, the kubernetes.io claims."""

    name = "jwt"

    def __init__(self, cluster: InMemoryCluster) -> None:
        self._cluster = cluster
        self.keys = HeldKeys()
        self.rotate()
        self.verifier: TokenVerifier = KubernetesTokenVerifier(self.keys, cluster.clock)

    def rotate(self) -> None:
        """Sign with a new key and publish only it."""
        self._private = rsa.generate_private_key(65537, 2048)
        jwk: dict[str, Any] = jwt.algorithms.RSAAlgorithm.to_jwk(
            self._private.public_key(), as_dict=True
        )
        self._kid = uuid.uuid4().hex
        jwk |= {"kid": self._kid, "use": "sig", "alg": "RS256"}
        self.keys.publish(keys_of({"keys": [jwk]}))

    def withdraw(self, token: str) -> None:
        self.rotate()

    def mint(self, pod: Pod, audience: str = AGENT_AUDIENCE, seconds: float = 600) -> str:
        return self.sign(self.claims(pod, audience, seconds))

    def claims(self, pod: Pod, audience: str = AGENT_AUDIENCE, seconds: float = 600) -> Any:
        now = int(self._cluster.clock.now().timestamp())
        node = self._cluster.nodes.get(pod.node_name or "")
        account = pod.service_account or "default"
        return {
            "aud": [audience],
            "exp": now + int(seconds),
            "iat": now,
            "nbf": now,
            "iss": ISSUER,
            "jti": uuid.uuid4().hex,
            "sub": f"system:serviceaccount:{pod.namespace}:{account}",
            "kubernetes.io": {
                "namespace": pod.namespace,
                "node": {"name": node.name, "uid": node.uid},
                "pod": {"name": pod.name, "uid": pod.uid},
                "serviceaccount": {"name": account, "uid": self._account_uid(pod, account)},
            },
        }

    def _account_uid(self, pod: Pod, account: str) -> str:
        """The UID of the pod's account (made when missing, as TokenRequest needs one)."""
        return self._cluster.service_accounts.ensure(pod.namespace, account).uid

    def sign(self, claims: Any, kid: str | None = None) -> str:
        headers = {"kid": kid or self._kid}
        return jwt.encode(claims, self._private, algorithm="RS256", headers=headers)
