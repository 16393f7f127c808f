"""Who may call the apiserver: the agent pod running on the node it names, and only for that node.

A token is reviewed (TokenReview, audience `brupop-apiserver`); the pod it is bound to must carry
the agent label, run as the agent service account in brupop's namespace and be scheduled on the
named node; a given node UID must be that Node's. Positive answers are cached for a short time,
never past the token's expiry, so an agent's steady traffic costs one review per cache period.
A token the review refused is remembered (by its hash) for a few seconds, so a burst of requests
carrying one bad token costs one review, not one per request.

With local verification (`agent_pods` given) the "review" is a TokenVerifier's check of the
token's signature and claims, the pod is looked up in the watch-fed AgentPodMirror rather than
read from the cluster, and the token's node claims (name, UID) stand for the Node read. A cached
decision is dropped once its pod leaves the mirror, and every one once the issuer withdraws a key;
since those two revoke it, a decision is kept until its token expires (at most
LOCAL_DECISION_SECONDS), not for the review cache period: an agent's long-poll every 30 s then
costs no verification. The token's pod and ServiceAccount are checked as TokenReview checks them
(TokenBindings): present with the token's UIDs, not deleted past kube-apiserver's leeway.

A decision in the last quarter of its life is due for renewal (`renewal_due`, `renew`): the
request path renews it off the request (routes/authorization.py), so an agent that keeps calling
never meets an expired decision. Without it, the agents that connected together (a replica's
start, a connect storm) would all be reviewed again together, each poll on the full path.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass

import structlog

from brupop.domain.cluster.objects import COMPONENT_LABEL, Node, Pod, TokenIdentity
from brupop.ports.clock import Clock
from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.cluster.pod_repository import PodRepository
from brupop.ports.errors import NotFoundError
from brupop.ports.tokens.token_reviewer import TokenReviewer
from brupop.services.apiserver.authorization.binding import TokenBindings
from brupop.services.apiserver.authorization.cache import ExpiringCache
from brupop.services.apiserver.authorization.errors import NotAllowedError, UnauthenticatedError
from brupop.services.apiserver.authorization.pods import AgentPodMirror
from brupop.services.apiserver.authorization.token_expiry import token_expiry

AGENT_AUDIENCE = "brupop-apiserver"
AGENT_SERVICE_ACCOUNT = "brupop-agent-service-account"
AGENT_COMPONENT = "agent"
AGENTS_CACHED = 32768
"""Positive answers kept: two per agent (with and without its node UID) for 10,000 agents and
room to spare; an entry is a few hundred bytes."""

LOCAL_DECISION_SECONDS = 600.0
"""How long a locally verified decision is kept at most (its token's expiry comes first)."""
RENEW_AFTER_SHARE = 0.75
"""The share of a decision's life after which it is due for renewal."""

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class AccessRequest:
    """What a caller presents: the node it acts for, optionally that node's UID, and a token."""

    node_name: str
    node_uid: str | None
    token: str


@dataclass(frozen=True)
class AgentCaller:
    """An authorized agent: its pod and the node (name and verified UID) it may act on."""

    node_name: str
    node_uid: str
    pod_namespace: str
    pod_name: str


class Authorizer:
    """Decides AccessRequests; raises UnauthenticatedError (401) or NotAllowedError (403).

    Cluster failures surface as the ports' errors (e.g. UnavailableError) for the caller to map.
    """

    def __init__(
        self,
        *,
        token_reviewer: TokenReviewer,
        pods: PodRepository,
        nodes: NodeRepository,
        clock: Clock,
        namespace: str,
        cache_seconds: float,
        refusal_seconds: float = 5.0,
        service_account: str = AGENT_SERVICE_ACCOUNT,
        agent_pods: AgentPodMirror | None = None,
    ) -> None:
        self._reviewer = token_reviewer
        self._nodes = nodes
        self._clock = clock
        self._cache_seconds = cache_seconds
        self._refusal_seconds = refusal_seconds
        self._username = f"system:serviceaccount:{namespace}:{service_account}"
        self._service_account = service_account
        self._agent_pods = agent_pods
        self._bindings = TokenBindings(pods, namespace, clock, service_account, agent_pods)
        self._identities: ExpiringCache[_Verified] = ExpiringCache(clock, AGENTS_CACHED)
        self._decisions: ExpiringCache[_Decision] = ExpiringCache(clock, AGENTS_CACHED)
        self._refusals: ExpiringCache[str] = ExpiringCache(clock)  # token hash -> why
        self._review_locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def cached(self, request: AccessRequest) -> AgentCaller | None:
        """A still-valid earlier decision for this exact request, without any cluster call.

        UnauthenticatedError when the review refused this token moments ago."""
        digest = _digest(request.token)  # hashed once: every cached long-poll asks here
        refusal = self._refusals.get(digest)
        if refusal is not None:
            raise UnauthenticatedError(refusal)
        return self._still_valid(_decision_key(request, digest))

    def authorize(self, request: AccessRequest) -> AgentCaller:
        """The caller, once every check passes."""
        key = _decision_key(request, _digest(request.token))
        cached = self._still_valid(key)
        if cached is not None:
            return cached
        return self._decide(request, key)

    def renewal_due(self, request: AccessRequest) -> bool:
        """Whether this request's cached decision is in the last part of its life."""
        decision = self._decisions.get(_decision_key(request, _digest(request.token)))
        return decision is not None and self._clock.monotonic() >= decision.renew_at

    def renew(self, request: AccessRequest) -> AgentCaller:
        """Check the request again, its token reviewed anew, in place of its cached decision;
        a refusal drops that decision, so the caller's next request is refused too."""
        digest = _digest(request.token)
        key = _decision_key(request, digest)
        self._identities.drop(digest)
        try:
            return self._decide(request, key)
        except (UnauthenticatedError, NotAllowedError):
            self._decisions.drop(key)
            raise

    def _decide(self, request: AccessRequest, key: str) -> AgentCaller:
        generation = self._generation()  # before the check: a key withdrawn during it counts
        identity = self._identity(request.token, generation)
        pod = self._agent_pod(identity, request.node_name)
        node_uid = self._node_uid(identity, request)
        caller = AgentCaller(request.node_name, node_uid, pod.namespace, pod.name)
        lifetime = self._lifetime(identity, request.token)
        renew_at = self._clock.monotonic() + lifetime * RENEW_AFTER_SHARE
        decision = _Decision(caller, pod.uid, identity.service_account_uid, generation, renew_at)
        self._decisions.put(key, decision, lifetime)
        return caller

    def _generation(self) -> int:
        """The issuer keys' generation (local verification), else 0."""
        return self._agent_pods.keys_generation if self._agent_pods is not None else 0

    def _still_valid(self, key: str) -> AgentCaller | None:
        """A cached decision, unless the mirrors have seen its pod or account go or the issuer
        withdrew a key since (the decision is dropped)."""
        decision = self._decisions.get(key)
        if decision is None:
            return None
        if decision.generation != self._generation() or not self._bindings.still_bound(
            decision.caller.pod_name, decision.pod_uid, decision.account_uid
        ):
            self._decisions.drop(key)
            return None
        return decision.caller

    def _identity(self, token: str, generation: int) -> TokenIdentity:
        key = _digest(token)
        with self._guard:
            lock = self._review_locks.setdefault(key, threading.Lock())
        try:
            with lock:  # one review for a burst of requests carrying one new token
                identity = self._reviewed(key, token, generation)
        finally:
            with self._guard:
                if self._review_locks.get(key) is lock and not lock.locked():
                    del self._review_locks[key]
        return identity

    def _reviewed(self, key: str, token: str, generation: int) -> TokenIdentity:
        """The token's accepted identity: remembered (under the current key generation), else
        reviewed (the answer is remembered)."""
        refusal = self._refusals.get(key)
        if refusal is not None:
            raise UnauthenticatedError(refusal)
        remembered = self._identities.get(key)
        if remembered is not None and remembered.generation == generation:
            return remembered.identity
        identity = self._reviewer.review(token, (AGENT_AUDIENCE,))
        refusal = _refusal(identity)
        if refusal is not None:
            self._refusals.put(key, refusal, self._refusal_seconds)
            raise UnauthenticatedError(refusal)
        lifetime = self._lifetime(identity, token)
        self._identities.put(key, _Verified(identity, generation), lifetime)
        return identity

    def _agent_pod(self, identity: TokenIdentity, node_name: str) -> Pod:
        if identity.pod_name is None:
            raise NotAllowedError("the token is not bound to a pod")
        if identity.username != self._username:
            raise NotAllowedError("the token does not belong to the agent service account")
        self._bindings.check_account(identity)
        pod = self._bindings.pod(identity)
        if pod is None:
            raise NotAllowedError("the token's pod is not an agent pod")
        is_agent = pod.labels.get(COMPONENT_LABEL) == AGENT_COMPONENT
        if not is_agent or pod.service_account != self._service_account:
            raise NotAllowedError("the token's pod is not an agent pod")
        if pod.node_name != node_name:
            log.info("authorization.node_mismatch", pod=pod.name, claimed=node_name)
            raise NotAllowedError("the calling pod does not run on that node")
        return pod

    def _node_uid(self, identity: TokenIdentity, request: AccessRequest) -> str:
        """The node's UID: the verified token's node claims when it has them, else the Node's."""
        if identity.node_uid is None or identity.node_name is None:
            return self._node(request).uid
        if identity.node_name != request.node_name:
            raise NotAllowedError("the calling pod does not run on that node")
        if request.node_uid is not None and identity.node_uid != request.node_uid:
            raise NotAllowedError("the node UID does not match that node")
        return identity.node_uid

    def _node(self, request: AccessRequest) -> Node:
        try:
            node = self._nodes.get(request.node_name)
        except NotFoundError:
            raise NotAllowedError("no such node") from None
        if request.node_uid is not None and node.uid != request.node_uid:
            raise NotAllowedError("the node UID does not match that node")
        return node

    def _lifetime(self, identity: TokenIdentity, token: str) -> float:
        """The cache time, cut short by the token's expiry (from the review, else the JWT).
        0 turns caching off in either mode."""
        lifetime = self._cache_seconds
        if self._agent_pods is not None and lifetime > 0:
            lifetime = LOCAL_DECISION_SECONDS
        expires_at = identity.expires_at or token_expiry(token)
        if expires_at is not None:
            left = (expires_at - self._clock.now()).total_seconds()
            lifetime = min(lifetime, left)
        return lifetime


@dataclass(frozen=True)
class _Decision:
    """A cached positive answer, the UIDs of the pod and account it was given to, the key
    generation it was decided under, and when (monotonic) it is due for renewal."""

    caller: AgentCaller
    pod_uid: str
    account_uid: str | None
    generation: int
    renew_at: float


@dataclass(frozen=True)
class _Verified:
    """An accepted token's identity and the key generation it was checked under."""

    identity: TokenIdentity
    generation: int


def _refusal(identity: TokenIdentity) -> str | None:
    """Why the review's answer does not let the token in, or None when it does."""
    if not identity.authenticated:
        return "the token was not accepted"
    if AGENT_AUDIENCE not in identity.audiences:
        return f"the token is not meant for {AGENT_AUDIENCE}"
    return None


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _decision_key(request: AccessRequest, digest: str) -> str:
    """The decisions cache's key: the token's digest (`_digest`), the node's name and UID."""
    return f"{digest}|{request.node_name}|{request.node_uid or ''}"
