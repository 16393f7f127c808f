"""The long-poll lane reads a query's parameters exactly as `parse_qsl` does, though it skips
parse_qsl's decoding steps for a query with nothing to decode (an agent's, on every answer)."""

from __future__ import annotations

from urllib.parse import parse_qsl

from hypothesis import given
from hypothesis import strategies as st

from brupop.adapters.apiserver_http.routes.long_polls import _pairs

QUERY_PARTS = st.sampled_from(
    ["", "&", "=", "==", "timeoutSeconds", "resourceVersion", "30", "%20", "%zz", "+", ";", "a=1"]
)


@given(st.lists(QUERY_PARTS, max_size=10).map("".join))
def test_the_lane_reads_any_query_as_parse_qsl_does(query: str) -> None:
    assert _pairs(query) == parse_qsl(query, keep_blank_values=True)


def test_an_agents_query_is_read_without_decoding() -> None:
    assert _pairs("timeoutSeconds=30&resourceVersion=1234") == [
        ("timeoutSeconds", "30"),
        ("resourceVersion", "1234"),
    ]
