"""`brupop simulate --policy FILE`: the BottlerocketUpdatePolicy a user would apply, read and
checked by the same reader the controller uses, so a file simulate accepts is one the
controller would use (and a file it refuses, one the controller would ignore). A key written
twice in one mapping is refused, naming the key: YAML parsers commonly keep the last one
silently, and kubectl refuses such a file. Nesting and aliases are bounded, so that neither a
deep file nor an alias bomb can exhaust the stack or the time of the command that reads it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from brupop.domain.policy.policy_object import PolicyObjectError, policy_from_object
from brupop.domain.policy.update_policy import DEFAULT_POLICY_NAME

POLICY_FILE_MAX_BYTES = 256 * 1024
POLICY_FILE_MAX_DEPTH = 64  # the policy's deepest path is a few levels; the domain says more
POLICY_FILE_MAX_VALUES = 65_536  # counted with every alias expanded, as a reader walks them
_KEY_SHOWN_CHARS = 64
_MERGE_TAG = "tag:yaml.org,2002:merge"


class PolicyFileError(ValueError):
    """The file cannot be used as the policy; the message says why, in one line."""


class DuplicateKeyError(yaml.constructor.ConstructorError):
    """A mapping of the file holds the same key twice."""

    def __init__(self, key: object, mark: yaml.Mark) -> None:
        shown = repr(key)[:_KEY_SHOWN_CHARS]
        super().__init__(None, None, f"the key {shown} appears twice in one mapping", mark)


class BoundExceededError(yaml.composer.ComposerError):
    """The file nests deeper, or holds more values once its aliases are expanded, than a
    policy can."""

    def __init__(self, problem: str, mark: yaml.Mark | None) -> None:
        super().__init__(None, None, problem, mark)


class UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a mapping that holds one key twice, nesting past
    POLICY_FILE_MAX_DEPTH and more than POLICY_FILE_MAX_VALUES values once aliases expand."""

    def __init__(self, stream: bytes) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self._depth >= POLICY_FILE_MAX_DEPTH:
            mark = parent.start_mark if parent is not None else None
            raise BoundExceededError(f"nested more than {POLICY_FILE_MAX_DEPTH} levels", mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_document(self, node: yaml.Node) -> Any:
        values, depth = expanded_size(node)
        if values > POLICY_FILE_MAX_VALUES:
            problem = f"more than {POLICY_FILE_MAX_VALUES} values once its aliases are expanded"
            raise BoundExceededError(problem, node.start_mark)
        if depth > POLICY_FILE_MAX_DEPTH:
            problem = f"nested more than {POLICY_FILE_MAX_DEPTH} levels once its aliases expand"
            raise BoundExceededError(problem, node.start_mark)
        return super().construct_document(node)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
                continue  # merge keys may repeat; other node keys are refused by PyYAML
            key = self.construct_object(key_node)
            if key in seen:
                raise DuplicateKeyError(key, key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def expanded_size(root: yaml.Node) -> tuple[int, int]:
    """How many values the document holds, and how deep it nests, with each alias counted as a
    copy of its anchor; a node that holds itself is past both bounds. Each node is weighed once,
    with a stack of its own, so any graph is measured in linear time without recursion."""
    past = (POLICY_FILE_MAX_VALUES + 1, POLICY_FILE_MAX_DEPTH + 1)
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


def load_policy_file(path: Path) -> dict[str, Any]:
    """The policy's wire object (the document in the file), once it has passed every check."""
    try:
        with path.open("rb") as source:
            raw = source.read(POLICY_FILE_MAX_BYTES + 1)
    except OSError as error:
        raise PolicyFileError(f"{path}: cannot be read ({error.strerror or error})") from None
    if len(raw) > POLICY_FILE_MAX_BYTES:
        raise PolicyFileError(f"{path}: larger than {POLICY_FILE_MAX_BYTES} bytes")
    try:
        documents = [doc for doc in yaml.load_all(raw, Loader=UniqueKeyLoader) if doc is not None]
    except (DuplicateKeyError, BoundExceededError) as error:
        line = error.problem_mark.line + 1 if error.problem_mark is not None else "?"
        raise PolicyFileError(f"{path}: {error.problem} (line {line})") from None
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        line = f" (line {where.line + 1})" if where is not None else ""
        raise PolicyFileError(f"{path}: not valid YAML{line}") from None
    if len(documents) != 1 or not isinstance(documents[0], Mapping):
        raise PolicyFileError(f"{path}: expected one BottlerocketUpdatePolicy object")
    obj = dict(documents[0])
    try:
        policy = policy_from_object(obj)
    except PolicyObjectError as error:
        raise PolicyFileError(f"{path}: {error}") from None
    if not policy.is_default:
        raise PolicyFileError(
            f"{path}: metadata.name is {policy.name!r}; brupop follows only the policy "
            f"named {DEFAULT_POLICY_NAME!r}"
        )
    if policy.spec is None:
        raise PolicyFileError(f"{path}: {policy.problem}")
    obj.pop("status", None)
    return obj
