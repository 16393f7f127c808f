"""The agent reads its apiserver's base URL and writes its queries as `urllib.parse` does, and
refuses, with one ValueError, whatever it does not read (without loading `urllib.parse`)."""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brupop.adapters.apiserver_client.base_url import BaseUrl, query_string, split_base_url

_LABEL = st.from_regex(r"[a-zA-Z0-9]([a-zA-Z0-9-]{0,10}[a-zA-Z0-9])?", fullmatch=True)
_HOSTS = st.one_of(
    st.lists(_LABEL, min_size=1, max_size=4).map(".".join),
    st.sampled_from(["127.0.0.1", "[::1]", "[FD00::A:1]", "[::ffff:10.0.0.1]"]),
)
_PORTS = st.one_of(st.just(""), st.integers(1, 65535).map(lambda port: f":{port}"))
_PATHS = st.one_of(
    st.just(""), st.just("/"), st.from_regex(r"(/[a-zA-Z0-9._~-]{1,8}){1,3}/?", fullmatch=True)
)
_URLS = st.builds(
    lambda scheme, host, port, path: f"{scheme}://{host}{port}{path}",
    st.sampled_from(["http", "https", "HTTPS"]),
    _HOSTS,
    _PORTS,
    _PATHS,
)


@given(_URLS)
def test_a_plain_base_url_is_read_as_urllib_reads_it(url: str) -> None:
    expected = urlsplit(url)

    parts = split_base_url(url)

    secure = expected.scheme == "https"
    assert parts == BaseUrl(
        secure=secure,
        host=expected.hostname or "",
        port=expected.port or (443 if secure else 80),
        path_prefix=expected.path.rstrip("/"),
    )


_NEAR_URLS = st.one_of(
    st.text(max_size=60),
    st.builds(
        lambda start, text: start + text, st.sampled_from(["https://", "http://"]), st.text()
    ),
    st.builds(lambda url, text: url + text, _URLS, st.text(max_size=8)),
)


@given(_NEAR_URLS)
def test_any_text_is_either_read_as_urllib_reads_it_or_refused(text: str) -> None:
    try:
        parts = split_base_url(text)
    except ValueError as refused:
        assert str(refused).startswith("not an http(s) URL: ")
        return
    expected = urlsplit(text)
    assert parts.host == expected.hostname
    assert parts.port == (expected.port or (443 if parts.secure else 80))
    assert parts.path_prefix == expected.path.rstrip("/")


@pytest.mark.parametrize(
    "url",
    [
        "",
        "brupop-apiserver:443",
        "ftp://host",
        "https://",
        "https://:443",
        "https://user@host",
        "https://host:0",
        "https://host:65536",
        "https://host:+443",
        "https://host:44 3",
        "https://host/a?b=c",
        "https://host/#x",
        "https://hôst",
        "https://host\n",
        "https://::1",
        "https://[::1",
        "https://[::1]x",
        "https://[not-v6]",
    ],
)
def test_an_unusual_base_url_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match="not an http"):
        split_base_url(url)


_WORDS = st.text(max_size=20)


@given(st.dictionaries(_WORDS, _WORDS, max_size=4))
def test_a_query_is_written_as_urlencode_writes_it(query: dict[str, str]) -> None:
    assert query_string(query) == urlencode(query)
