"""A metadata-only list page is read as each named item's name and resourceVersion, the same as
a whole parse of the page gives, and anything else from the API is a refusal, never an empty
fleet."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brupop.adapters.kubernetes.api.version_pages import read_version_page
from brupop.ports.errors import UnavailableError

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)
_metadata = st.fixed_dictionaries(
    {},
    optional={
        "name": st.none() | st.text(max_size=8),
        "resourceVersion": st.none() | st.text(max_size=6),
        "managedFields": st.lists(_json, max_size=2),
        "labels": st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=3),
    },
)
_item = st.fixed_dictionaries({}, optional={"metadata": _metadata, "kind": st.just("X")})
_page = st.fixed_dictionaries(
    {"items": st.none() | st.lists(_item, max_size=6)},
    optional={
        "metadata": st.fixed_dictionaries(
            {}, optional={"continue": st.text(max_size=6), "resourceVersion": st.text(max_size=6)}
        ),
        "apiVersion": st.just("meta.k8s.io/v1"),
    },
)


def _parsed_whole(page: dict[str, Any]) -> tuple[list[tuple[str, str | None]], str, str]:
    named = [
        (item["metadata"]["name"], item["metadata"].get("resourceVersion") or None)
        for item in page["items"] or ()
        if (item.get("metadata") or {}).get("name")
    ]
    meta = page.get("metadata") or {}
    return named, meta.get("continue") or "", meta.get("resourceVersion") or ""


@given(_page)
def test_a_page_reads_as_a_whole_parse_of_it_does(page: dict[str, Any]) -> None:
    assert read_version_page("list nodes", json.dumps(page).encode()) == _parsed_whole(page)


def test_items_without_a_name_are_left_out_and_the_last_page_has_no_token() -> None:
    body = b'{"metadata":{"resourceVersion":"9"},"items":[{"metadata":{"resourceVersion":"3"}},'
    body += b'{"metadata":{"name":"node-a","resourceVersion":"4","managedFields":[{"f":1}]}}]}'

    assert read_version_page("list nodes", body) == ([("node-a", "4")], "", "9")


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"", "other than JSON"),
        (b"<html>", "other than JSON"),
        (
            b'{"items": [{"metadata": {"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}]}",
            "other than JSON",
        ),
        (b"[]", "another shape"),
        (b'{"items": {"name": "node-a"}}', "another shape"),
        (b'{"items": [{"metadata": {"name": 5}}]}', "another shape"),
        (b'{"items": [], "metadata": {"resourceVersion": 7}}', "another shape"),
    ],
    ids=["empty", "html", "nested-deep", "array", "items-object", "name-number", "version-number"],
)
def test_an_answer_that_is_not_a_list_page_is_unavailable(body: bytes, reason: str) -> None:
    with pytest.raises(UnavailableError, match=f"list nodes: .*{reason}"):
        read_version_page("list nodes", body)
