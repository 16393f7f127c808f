"""bounded_get: a GET that reads at most its cap of the body and refuses non-HTTP URLs."""

from __future__ import annotations

import pytest

from brupop.adapters.http.bounded_get import BoundedGetError, bounded_get
from tests.support.probe_server import BIG_BODY_BYTES, BIG_PATH, ProbeServer


def test_a_body_past_the_cap_is_cut_and_marked_truncated() -> None:
    with ProbeServer() as server:
        answer = bounded_get(server.base_url + BIG_PATH, 10, limit=4096)

    assert answer.status == 200
    assert len(answer.body) == 4096 < BIG_BODY_BYTES
    assert answer.truncated


def test_a_body_within_the_cap_is_read_whole() -> None:
    with ProbeServer() as server:
        server.answers["/x"] = (200, b'{"ok": true}')
        answer = bounded_get(server.base_url + "/x", 10, limit=4096)

    assert (answer.body, answer.truncated) == (b'{"ok": true}', False)


@pytest.mark.parametrize("url", ["ftp://example.org/", "http:///nohost", "not a url"])
def test_a_url_that_is_not_http_is_refused_before_any_connection(url: str) -> None:
    with pytest.raises(BoundedGetError, match="not an http"):
        bounded_get(url, 1)
