"""Reading policy objects: a bad spec is kept with its reason, and only `default` counts."""

from __future__ import annotations

from typing import Any

import pytest

from brupop.domain.policy.policy_object import (
    PROBLEM_MAX_LENGTH,
    PolicyObjectError,
    UpdatePolicy,
    policy_from_object,
    policy_object,
    policy_snapshot,
)
from brupop.domain.policy.update_policy import UpdatePolicySpec
from brupop.domain.policy.update_policy_status import PolicyPhase


def _object(name: str = "default", **fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "brupop.bottlerocket.aws/v1",
        "kind": "BottlerocketUpdatePolicy",
        "metadata": {"name": name, "namespace": "ops", "generation": 3, "resourceVersion": "17"},
        **fields,
    }


def test_a_policy_object_reads_its_identity_spec_and_status() -> None:
    policy = policy_from_object(
        _object(spec={"paused": True}, status={"phase": "Paused", "observedGeneration": 3})
    )
    assert (policy.name, policy.namespace, policy.generation, policy.resource_version) == (
        "default",
        "ops",
        3,
        "17",
    )
    assert policy.is_default
    assert policy.spec == UpdatePolicySpec(paused=True)
    assert policy.status is not None and policy.status.phase is PolicyPhase.PAUSED


def test_an_object_without_a_spec_has_the_default_spec() -> None:
    assert policy_from_object(_object()).spec == UpdatePolicySpec()


def test_a_bad_spec_is_kept_as_none_with_a_reason_naming_the_field() -> None:
    policy = policy_from_object(_object(spec={"canary": {"selector": "zone in (a"}}))
    assert policy.spec is None
    assert policy.problem is not None
    assert policy.problem.startswith("spec.canary.selector: ")
    assert "unbalanced parentheses" in policy.problem


def test_the_reason_for_many_problems_is_bounded() -> None:
    spec = {f"unknown{i}": "x" * 500 for i in range(50)}
    problem = policy_from_object(_object(spec=spec)).problem
    assert problem is not None
    assert len(problem) <= PROBLEM_MAX_LENGTH
    assert "and 45 more" in problem


def test_an_unreadable_status_counts_as_none() -> None:
    policy = policy_from_object(_object(status={"phase": "Exploded"}))
    assert policy.status is None
    assert policy.spec == UpdatePolicySpec()


@pytest.mark.parametrize(
    "obj",
    [
        {"kind": "BottlerocketShadow", "metadata": {"name": "default"}},
        {"apiVersion": "brupop.bottlerocket.aws/v2", "metadata": {"name": "default"}},
        {"spec": {}},
        {"metadata": {"name": ""}},
        {"metadata": "default"},
    ],
)
def test_what_is_not_a_policy_object_is_refused(obj: dict[str, Any]) -> None:
    with pytest.raises(PolicyObjectError):
        policy_from_object(obj)


def test_only_the_object_named_default_counts_and_the_others_are_named() -> None:
    spec = UpdatePolicySpec()
    found = [UpdatePolicy(name, "ops", spec) for name in ("staging", "default", "canary")]
    snapshot = policy_snapshot(found, "42")
    assert snapshot.default is found[1]
    assert snapshot.ignored == ("canary", "staging")
    assert snapshot.resource_version == "42"
    assert policy_snapshot([found[0]], "43").default is None


def test_a_policy_writes_back_to_the_object_it_was_read_from() -> None:
    obj = _object(spec={"paused": True, "canary": {"count": 2, "soakSeconds": 30}})
    written = policy_object(policy_from_object(obj))
    assert policy_from_object(written).spec == policy_from_object(obj).spec
    with pytest.raises(PolicyObjectError):
        policy_object(policy_from_object(_object(spec={"paused": "x"})))
