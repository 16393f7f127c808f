"""Spec writes meet stale resourceVersions: bounded re-read and retry, then a typed error."""

from __future__ import annotations

import pytest

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.domain.shadow import ShadowSpec
from brupop.domain.states import UpdateState
from brupop.ports.errors import ConflictError
from tests.contract.kubernetes.conftest import SHADOWS_PATH, sent, status
from tests.support.kube_api_rules import KINDS
from tests.support.kube_emulator import KubeEmulator

SHADOW_PATH = f"{SHADOWS_PATH}/brs-node-a"
STAGED = ShadowSpec(state=UpdateState.STAGED_AND_PERFORMED_UPDATE, version="1.20.0")
SHADOWS = KINDS["brupop.bottlerocket.aws", "v2", "bottlerocketshadows"]


def test_stale_version_from_a_concurrent_writer_is_reread_and_the_write_lands(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    kube.shadows.create("node-a", "uid-a")

    def agent_reports_meanwhile(_: object) -> None:
        current = emulator.stored(SHADOWS, "brupop-bottlerocket-aws", "brs-node-a")
        assert current is not None
        current["status"] = {
            "current_version": "1.19.2",
            "target_version": "1.20.0",
            "current_state": "Idle",
            "crash_count": 0,
        }
        emulator.put_object(SHADOWS, current)

    emulator[f"patch {SHADOW_PATH}"][:1] >> agent_reports_meanwhile

    written = kube.shadows.replace_spec("brs-node-a", STAGED, None)

    assert written.spec == STAGED
    assert written.status is not None  # the agent's report survived the spec write
    patches = [s for s in sent(emulator) if s.method == "PATCH"]
    gets = [s for s in sent(emulator) if s.method == "GET"]
    assert len(patches) == 2 and len(gets) == 2
    assert patches[0].body["metadata"] != patches[1].body["metadata"]


def test_conflicts_that_never_end_give_a_conflict_error_after_the_bound(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    kube.shadows.create("node-a", "uid-a")
    (
        emulator[f"patch {SHADOW_PATH}"]
        << 409
        << status(409, "Conflict", "the object has been modified")
    )

    with pytest.raises(ConflictError, match="after 3 attempts"):
        kube.shadows.replace_spec("brs-node-a", STAGED, None)

    methods = [s.method for s in sent(emulator)[1:]]
    assert methods == ["GET", "PATCH"] * 3


def test_stale_version_given_by_the_caller_is_not_retried(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    created = kube.shadows.create("node-a", "uid-a")
    kube.shadows.replace_spec("brs-node-a", ShadowSpec(version="1.19.2"), None)

    with pytest.raises(ConflictError, match="the object has been modified"):
        kube.shadows.replace_spec("brs-node-a", STAGED, created.resource_version)

    assert sent(emulator)[-1].method == "PATCH"
    assert kube.shadows.get("brs-node-a").spec == ShadowSpec(version="1.19.2")
