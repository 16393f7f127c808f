"""YAML a user hands brupop (a policy file, a rendered chart, a kubeconfig), read within bounds.

A key written twice in one mapping is refused, naming the key: YAML parsers commonly keep the
last one silently, and kubectl refuses such a file (a kubeconfig is read as the client reads
it, last key kept). Nesting and the count of values are bounded with every alias expanded, so
that neither a deep file nor an alias bomb can exhaust the stack or the time of the command
that reads it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

MAX_DEPTH = 64  # brupop's objects nest a few levels, the chart's CRDs 16
_KEY_SHOWN_CHARS = 64
_MERGE_TAG = "tag:yaml.org,2002:merge"


class YamlRefused(ValueError):
    """The text is not YAML brupop will read; the message says why in one line."""


class YamlTooLarge(YamlRefused):
    """The text passes a bound: its size, its nesting or its values once aliases expand."""


class DuplicateKeyError(yaml.constructor.ConstructorError):
    """A mapping holds the same key twice."""

    def __init__(self, key: object, mark: yaml.Mark) -> None:
        shown = repr(key)[:_KEY_SHOWN_CHARS]
        super().__init__(None, None, f"the key {shown} appears twice in one mapping", mark)


class BoundExceededError(yaml.composer.ComposerError):
    """The text nests deeper, or holds more values once its aliases expand, than allowed."""

    def __init__(self, problem: str, mark: yaml.Mark | None) -> None:
        super().__init__(None, None, problem, mark)


def load_yaml_file(
    path: Path, *, max_bytes: int, max_values: int, unique_keys: bool = True
) -> list[Any]:
    """Every non-empty document of the file at `path`; YamlRefused for a file that cannot be
    read, is larger than `max_bytes`, or that `load_documents` refuses."""
    try:
        with path.open("rb") as source:
            raw = source.read(max_bytes + 1)
    except OSError as error:
        raise YamlRefused(f"cannot be read ({error.strerror or error})") from None
    if len(raw) > max_bytes:
        raise YamlTooLarge(f"larger than {max_bytes} bytes")
    return load_documents(raw, max_values=max_values, unique_keys=unique_keys)


def load_documents(
    raw: bytes, *, max_values: int, max_depth: int = MAX_DEPTH, unique_keys: bool = True
) -> list[Any]:
    """Every non-empty document of `raw`; YamlRefused (`problem (line N)`) for text that is
    not YAML, repeats a key (with `unique_keys`) or passes a bound."""
    try:
        return _every_document(_BoundedLoader(raw, max_values, max_depth, unique_keys))
    except BoundExceededError as error:
        raise YamlTooLarge(f"{error.problem}{_line(error)}") from None
    except DuplicateKeyError as error:
        raise YamlRefused(f"{error.problem}{_line(error)}") from None
    except yaml.YAMLError as error:  # the reader decodes the first bytes as it is made
        raise YamlRefused(f"not valid YAML{_line(error)}") from None


def _every_document(loader: _BoundedLoader) -> list[Any]:
    try:
        documents = []
        while loader.check_data():  # type: ignore[no-untyped-call]
            document = loader.get_data()
            if document is not None:
                documents.append(document)
        return documents
    finally:
        loader.dispose()


def _line(error: yaml.YAMLError) -> str:
    mark = getattr(error, "problem_mark", None)
    return f" (line {mark.line + 1})" if mark is not None else ""


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a repeated key, nesting past `max_depth` and more than
    `max_values` values once aliases expand."""

    def __init__(self, stream: bytes, max_values: int, max_depth: int, unique_keys: bool) -> None:
        super().__init__(stream)
        self._max_values = max_values
        self._max_depth = max_depth
        self._unique_keys = unique_keys
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self._depth >= self._max_depth:
            mark = parent.start_mark if parent is not None else None
            raise BoundExceededError(f"nested more than {self._max_depth} levels", mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_document(self, node: yaml.Node) -> Any:
        values, depth = expanded_size(node, self._max_values, self._max_depth)
        if values > self._max_values:
            problem = f"more than {self._max_values} values once its aliases are expanded"
            raise BoundExceededError(problem, node.start_mark)
        if depth > self._max_depth:
            problem = f"nested more than {self._max_depth} levels once its aliases expand"
            raise BoundExceededError(problem, node.start_mark)
        return super().construct_document(node)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if self._unique_keys:
            self._refuse_repeated_keys(node)
        return super().construct_mapping(node, deep=deep)

    def _refuse_repeated_keys(self, node: yaml.MappingNode) -> None:
        seen: set[object] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
                continue  # merge keys may repeat; other node keys are refused by PyYAML
            key = self.construct_object(key_node)
            if key in seen:
                raise DuplicateKeyError(key, key_node.start_mark)
            seen.add(key)


def expanded_size(root: yaml.Node, max_values: int, max_depth: int) -> tuple[int, int]:
    """How many values the document holds, and how deep it nests, with each alias counted as a
    copy of its anchor (each figure capped just past its bound); a node that holds itself is
    past both. Each node is weighed once, with a stack of its own: linear, and no recursion."""
    past = (max_values + 1, max_depth + 1)
    sizes: dict[int, tuple[int, int]] = {}
    open_nodes: set[int] = set()
    pending: list[tuple[yaml.Node, bool]] = [(root, False)]
    while pending:
        node, weighed_children = pending.pop()
        key = id(node)
        if weighed_children:
            inner = [sizes[id(child)] for child in _children(node)]
            values = 1 + sum(size[0] for size in inner)
            depth = 1 + max((size[1] for size in inner), default=0)
            sizes[key] = (min(values, past[0]), min(depth, past[1]))
            open_nodes.discard(key)
        elif key in open_nodes:
            return past  # reached again from inside itself: an alias to an enclosing node
        elif key not in sizes:
            open_nodes.add(key)
            pending.append((node, True))
            pending.extend((child, False) for child in _children(node))
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []
