"""One page of a metadata-only list, read as the name and resourceVersion of each item only.

A resync by versions needs two strings per item. Parsed whole, a page builds every key of every
item's `managedFields` and frees it again: at 10,000 Nodes about 270 ms of CPU for 18 MiB of
JSON. msgspec decodes against the schema below and skips what it does not name without making
Python objects of it (about 14 ms for the same pages).
"""

from __future__ import annotations

from functools import cache

import msgspec

from brupop.ports.errors import UnavailableError


class _ItemMetadata(msgspec.Struct, frozen=True, gc=False, rename="camel"):
    name: str | None = None
    resource_version: str | None = None


class _Item(msgspec.Struct, frozen=True, gc=False):
    metadata: _ItemMetadata = _ItemMetadata()


_LIST_NAMES = {"token": "continue", "resource_version": "resourceVersion"}


class _ListMetadata(msgspec.Struct, frozen=True, gc=False, rename=_LIST_NAMES):
    token: str | None = None
    resource_version: str | None = None


class _Page(msgspec.Struct, frozen=True, gc=False):
    items: list[_Item] | None = None
    metadata: _ListMetadata = _ListMetadata()


@cache
def _decoder() -> msgspec.json.Decoder[_Page]:
    return msgspec.json.Decoder(_Page)


def read_version_page(action: str, body: bytes) -> tuple[list[tuple[str, str | None]], str, str]:
    """The (name, resourceVersion) of each named item, the continue token ("" on the last
    page) and the list's resourceVersion. An answer that is not such a page, an empty one
    included, is UnavailableError: a resync never takes it for a fleet with nothing in it."""
    try:
        page = _decoder().decode(body)
    except msgspec.ValidationError as error:
        raise UnavailableError(
            f"{action}: the Kubernetes API sent a list of another shape ({error})"
        ) from None
    except (msgspec.DecodeError, RecursionError):
        raise UnavailableError(
            f"{action}: the Kubernetes API sent something other than JSON"
        ) from None
    named = [
        (item.metadata.name, item.metadata.resource_version or None)
        for item in page.items or ()
        if item.metadata.name
    ]
    return named, page.metadata.token or "", page.metadata.resource_version or ""
