"""The policy reader on whatever JSON the cluster or a file hands it: a policy (its spec perhaps
unusable, with a bounded reason) or a PolicyObjectError, and nothing else, quickly. Deep
nesting, wrong types, huge sizes, Unicode digits and control characters included."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brupop.domain.policy.policy_object import (
    PROBLEM_MAX_LENGTH,
    PolicyObjectError,
    UpdatePolicy,
    policy_from_object,
)
from brupop.domain.policy.update_policy import UpdatePolicySpec
from tests.support.outside_input import (
    DEEP,
    Deep,
    materialized,
    outside_json,
    outside_text,
)

SPEC_FIELDS = tuple(field.alias or name for name, field in UpdatePolicySpec.model_fields.items())
# Sections the reader goes into, with the keys of their entries, so that values reach the
# validators of cron, zones, matchers, selectors and URLs rather than stopping at the top.
SECTIONS = {
    "windows": ("cron", "timeZone"),
    "alertGate": ("prometheusUrl", "matchers", "ignore"),
    "canary": ("selector", "count", "soakSeconds"),
    "budgets": ("groupBy", "maxConcurrent"),
    "blackouts": ("start", "end", "reason"),
    "version": ("pin", "minReleaseAgeHours"),
    "drain": ("gracePeriodSeconds", "timeoutSeconds", "onTimeout", "forceNamespaces"),
}


def _read(obj: Any) -> UpdatePolicy | None:
    """The reader's answer; None when it refused the object with its typed error."""
    try:
        policy = policy_from_object(materialized(obj))
    except PolicyObjectError as error:
        assert str(error)
        return None
    assert (policy.spec is None) == (policy.problem is not None)
    assert policy.problem is None or 0 < len(policy.problem) <= PROBLEM_MAX_LENGTH
    return policy


def _envelope(spec: Any) -> dict[str, Any]:
    return {"apiVersion": "brupop.bottlerocket.aws/v1", "kind": "BottlerocketUpdatePolicy",
            "metadata": {"name": "default"}, "spec": spec}  # fmt: skip


def _entries(keys: tuple[str, ...]) -> st.SearchStrategy[Any]:
    value = st.one_of(outside_text(), outside_json())
    entry = st.dictionaries(st.sampled_from(keys), value)
    return st.one_of(entry, st.lists(entry, max_size=3), outside_json())


_NEAR_SPECS = st.fixed_dictionaries(
    {},
    optional={
        **{key: _entries(keys) for key, keys in SECTIONS.items()},
        **{key: outside_json(5) for key in SPEC_FIELDS if key not in SECTIONS},
    },
)


@settings(max_examples=150, deadline=2000)
@given(outside_json())
def test_policy_reader_refuses_any_json_with_its_typed_error(obj: Any) -> None:
    _read(obj)


@settings(max_examples=150, deadline=2000)
@given(st.one_of(outside_json(), _NEAR_SPECS))
def test_policy_reader_refuses_any_spec_with_a_bounded_reason(spec: Any) -> None:
    policy = _read(_envelope(spec))
    assert policy is not None, "an object named default is a policy, whatever its spec"


@settings(max_examples=100, deadline=2000)
@given(st.sampled_from(("metadata", "status", "kind", "apiVersion")), outside_json())
def test_policy_reader_refuses_any_envelope_field_with_its_typed_error(
    key: str, value: Any
) -> None:
    _read({**_envelope({}), key: value})


@pytest.mark.parametrize("where", ["spec", "windows", "matchers", "status", "metadata"])
def test_ten_thousand_nested_lists_are_a_reason_not_a_recursion_error(where: str) -> None:
    deep = Deep(DEEP)  # `_read` makes it 10,000 plain lists
    placed: dict[str, Any] = {
        "spec": _envelope(deep),
        "windows": _envelope({"windows": deep}),
        "matchers": _envelope({"alertGate": {"prometheusUrl": "http://p:9090", "matchers": deep}}),
        "status": {**_envelope({}), "status": deep},
        "metadata": {**_envelope({}), "metadata": {"name": "default", "labels": deep}},
    }
    policy = _read(placed[where])
    assert policy is not None
    assert (policy.spec is None) is (where in ("spec", "windows", "matchers"))


def test_a_huge_spec_is_read_with_a_bounded_reason() -> None:
    spec = json.loads(json.dumps({f"field{i}": "x" * 1000 for i in range(2000)}))
    policy = _read(_envelope(spec))
    assert policy is not None and policy.spec is None
