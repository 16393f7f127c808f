"""The apiserver's container builds the whole app, and a provider overridden with a fake is
the one the app uses: here the TokenReviewer every protected request goes through."""

from __future__ import annotations

import anyio
from starlette.applications import Starlette
from starlette.types import Message

from brupop.adapters.apiserver_http.app import ApiserverOptions
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import COMPONENT_LABEL, OwnerReference, TokenIdentity
from brupop.entrypoints.apiserver.container import ApiserverContainer
from brupop.ports.tokens.token_reviewer import TokenReviewer
from brupop.services.apiserver.authorization.authorizer import AGENT_SERVICE_ACCOUNT

NS = "brupop-bottlerocket-aws"
NODE_UID = "/bottlerocket-node-resource/node-uid"


class ReviewerOfOtherNode:
    """A TokenReviewer that says every token is bound to the agent pod of node n2."""

    def __init__(self, cluster: InMemoryCluster) -> None:
        self._pod = cluster.pods.get(NS, "brupop-agent-n2")
        self._account = cluster.service_accounts.get(AGENT_SERVICE_ACCOUNT)
        self.reviewed: list[str] = []

    keys_generation = 0  # as a TokenVerifier: no key is ever withdrawn

    def load_keys(self) -> None:
        return None

    def refresh_keys(self) -> None:
        return None

    def review(self, token: str, audiences: tuple[str, ...]) -> TokenIdentity:
        self.reviewed.append(token)
        return TokenIdentity(
            authenticated=True,
            username=f"system:serviceaccount:{NS}:{AGENT_SERVICE_ACCOUNT}",
            audiences=audiences,
            pod_name=self._pod.name,
            pod_uid=self._pod.uid,
            node_name="n2",
            service_account_uid=self._account.uid,
        )


def _cluster() -> InMemoryCluster:
    cluster = InMemoryCluster(NS)
    owner = (OwnerReference(kind="DaemonSet", name="brupop-agent", controller=True),)
    for node in ("n1", "n2"):
        cluster.add_node(node, uid=f"uid-{node}")
        cluster.add_pod(
            NS,
            f"brupop-agent-{node}",
            node,
            labels={COMPONENT_LABEL: "agent"},
            owners=owner,
            service_account=AGENT_SERVICE_ACCOUNT,
        )
    return cluster


def _ask_node_uid(app: Starlette, token: str) -> int:
    """The status of node n1's agent asking for its node's uid with `token` (one ASGI call)."""
    headers = {"brupopnodename": "n1", "brupopk8sauthtoken": token}
    scope = {
        "type": "http",
        "method": "GET",
        "scheme": "https",
        "path": NODE_UID,
        "root_path": "",
        "query_string": b"",
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8443),
    }
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    anyio.run(app, scope, receive, send)
    return int(next(m["status"] for m in sent if m["type"] == "http.response.start"))


def test_the_apiserver_container_answers_the_nodes_own_agent_over_the_chosen_cluster() -> None:
    cluster = _cluster()
    container = ApiserverContainer(options=ApiserverOptions(namespace=NS))
    container.cluster.override(cluster)

    status = _ask_node_uid(container.app(), cluster.issue_token(NS, "brupop-agent-n1"))

    assert status == 200


def test_the_apiserver_container_authorizes_with_the_token_reviewer_put_in_its_place() -> None:
    cluster = _cluster()
    reviewer = ReviewerOfOtherNode(cluster)
    options = ApiserverOptions(namespace=NS, token_verification="tokenreview")
    container = ApiserverContainer(options=options)
    container.cluster.override(cluster)
    container.token_reviewer.override(reviewer)

    status = _ask_node_uid(container.app(), cluster.issue_token(NS, "brupop-agent-n1"))

    assert status == 403
    assert len(reviewer.reviewed) == 1


def test_the_apiserver_container_verifies_locally_with_the_verifier_put_in_its_place() -> None:
    cluster = _cluster()
    verifier = ReviewerOfOtherNode(cluster)
    container = ApiserverContainer(options=ApiserverOptions(namespace=NS))
    container.cluster.override(cluster)
    container.token_verifier.override(verifier)

    status = _ask_node_uid(container.app(), cluster.issue_token(NS, "brupop-agent-n1"))

    assert status == 403
    assert len(verifier.reviewed) == 1
    assert cluster.token_reviewer.review_count == 0


def test_the_apiserver_container_takes_the_memory_cluster_when_brupop_cluster_says_so() -> None:
    container = ApiserverContainer(options=ApiserverOptions(namespace=NS))
    container.settings.from_dict({"cluster": "memory", "namespace": NS})

    cluster = container.cluster()

    assert isinstance(cluster, InMemoryCluster)
    assert cluster.namespace == NS
    assert container.app().state.long_polls is not None  # the whole graph builds over it


_reviewer: type[TokenReviewer] = ReviewerOfOtherNode
