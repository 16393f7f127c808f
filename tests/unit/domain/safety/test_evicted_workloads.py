"""The record of evicted workloads' ready replicas: which workloads, and its bounded encoding."""

from __future__ import annotations

import pytest

from brupop.domain.cluster.objects import OwnerReference, Pod
from brupop.domain.safety.evicted_workloads import (
    ANNOTATION_MAX_LENGTH,
    EVICTED_WORKLOADS_ANNOTATION,
    WORKLOADS_MAX,
    EvictedWorkloadsError,
    WorkloadRef,
    decode_record,
    encode_record,
    record_on,
    workloads_of,
)


def _pod(name: str, namespace: str, *owners: OwnerReference) -> Pod:
    return Pod(name=name, namespace=namespace, uid=name, node_name="n", owners=owners)


def test_workloads_are_the_controlling_owners_that_recreate_pods() -> None:
    pods = [
        _pod("web-a", "default", OwnerReference("ReplicaSet", "web-1", controller=True)),
        _pod("web-b", "default", OwnerReference("ReplicaSet", "web-1", controller=True)),
        _pod("db-0", "data", OwnerReference("StatefulSet", "db", controller=True)),
        _pod("job-x", "default", OwnerReference("Job", "nightly", controller=True)),
        _pod("bare", "default"),
        _pod("ref", "default", OwnerReference("ReplicaSet", "other", controller=False)),
    ]

    assert workloads_of(pods) == (
        WorkloadRef("ReplicaSet", "default", "web-1"),
        WorkloadRef("StatefulSet", "data", "db"),
    )


def test_a_record_reads_back_as_written() -> None:
    counts = {
        WorkloadRef("ReplicaSet", "default", "web-1"): 3,
        WorkloadRef("StatefulSet", "d", "db"): 0,
    }

    text = encode_record(counts)

    assert decode_record(text) == counts
    assert record_on({EVICTED_WORKLOADS_ANNOTATION: text}) == counts
    assert record_on({}) is None


def test_a_record_is_bounded_in_count_and_size() -> None:
    many = {WorkloadRef("ReplicaSet", "ns", f"w{i:04d}" + "x" * 200): 1 for i in range(500)}

    text = encode_record(many)

    assert len(text) <= ANNOTATION_MAX_LENGTH
    assert 0 < len(decode_record(text)) <= WORKLOADS_MAX


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[]",
        '{"ReplicaSet/web": 1}',
        '{"ReplicaSet/ns/web": -1}',
        '{"a/b/c": "3"}',
        '{"a/b/c": true}',
        "x" * (ANNOTATION_MAX_LENGTH + 1),
        "[" * (ANNOTATION_MAX_LENGTH // 2),  # nested deeper than the JSON parser's stack
    ],
)
def test_a_record_this_module_did_not_write_is_refused(text: str) -> None:
    with pytest.raises(EvictedWorkloadsError):
        decode_record(text)
