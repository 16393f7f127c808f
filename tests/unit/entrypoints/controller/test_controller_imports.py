"""`brupop controller` loads only what it uses: the token libraries (PyJWT and cryptography,
about 8 MiB resident) belong to the apiserver, which verifies agents' tokens, and the embedded
in-memory cluster to the processes that choose it."""

from __future__ import annotations

import json
import subprocess
import sys

from kubernetes.client import ApiClient, Configuration

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.adapters.kubernetes.tokens.token_verifier import KubernetesTokenVerifier

# A fresh interpreter loads the controller's module and builds the cluster adapter it runs on.
PROBE = """\
import json, sys
from kubernetes.client import ApiClient, Configuration
import brupop.entrypoints.controller.main
import brupop.entrypoints.controller.container
from brupop.adapters.kubernetes.cluster import KubernetesCluster
cluster = KubernetesCluster(ApiClient(Configuration()), "brupop-bottlerocket-aws")
cluster.shadows, cluster.leases, cluster.nodes
print(json.dumps(sorted(sys.modules)))
"""


def _modules_loaded_by_the_controller() -> list[str]:
    answer = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    loaded: list[str] = json.loads(answer.stdout.splitlines()[-1])
    return loaded


def test_the_controller_over_a_real_cluster_never_loads_the_token_libraries() -> None:
    loaded = _modules_loaded_by_the_controller()
    assert "brupop.adapters.kubernetes.cluster" in loaded  # the probe reached the adapter
    heavy = [name for name in loaded if name.split(".")[0] in ("jwt", "cryptography")]
    assert heavy == []


def test_the_controller_over_a_real_cluster_never_loads_the_in_memory_cluster() -> None:
    loaded = _modules_loaded_by_the_controller()
    assert "brupop.entrypoints.clusters" in loaded  # the probe reached the cluster choice
    assert [name for name in loaded if name.startswith("brupop.adapters.memory")] == []


def test_the_cluster_builds_its_token_verifier_once_when_first_asked() -> None:
    cluster = KubernetesCluster(ApiClient(Configuration()), "brupop-bottlerocket-aws")
    verifier = cluster.token_verifier
    assert isinstance(verifier, KubernetesTokenVerifier)
    assert cluster.token_verifier is verifier
    cluster.close()
