"""The local token verifier's rig: an in-memory cluster with node n1, an issuer that signs as
the Kubernetes API would, and an agent pod on n1 to mint tokens for."""

from __future__ import annotations

import pytest

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.cluster.objects import Pod
from brupop.services.apiserver.authorization.authorizer import AGENT_SERVICE_ACCOUNT
from tests.contract.cluster.token_issuers import SigningIssuer
from tests.fakes.clock import FakeClock

NS = "brupop-bottlerocket-aws"


@pytest.fixture
def cluster() -> InMemoryCluster:
    cluster = InMemoryCluster(NS, clock=FakeClock())
    cluster.add_node("n1", uid="uid-n1")
    return cluster


@pytest.fixture
def signer(cluster: InMemoryCluster) -> SigningIssuer:
    return SigningIssuer(cluster)


@pytest.fixture
def pod(cluster: InMemoryCluster) -> Pod:
    return cluster.add_pod(NS, "agent-n1", "n1", service_account=AGENT_SERVICE_ACCOUNT)
