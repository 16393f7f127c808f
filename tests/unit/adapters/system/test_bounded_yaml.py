"""The YAML a user hands brupop is read within bounds: a file past its size, its nesting, or
its values once aliases expand is refused in one line naming the bound, at once (a bomb is
weighed, never expanded); a key written twice is refused where asked; plain YAML reads as
PyYAML reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from brupop.adapters.system.bounded_yaml import (
    YamlRefused,
    YamlTooLarge,
    load_documents,
    load_yaml_file,
)

VALUES_MAX = 65_536


def _alias_chain(levels: int, width: int, nesting: int) -> str:
    """Keys x0..x{levels-1}, each `width` copies of the one before, `nesting` lists deep: a
    small text whose values multiply, or whose depth adds up, once aliases expand."""
    keys = ["x0: &x0 1"]
    for level in range(1, levels):
        inner = ", ".join([f"*x{level - 1}"] * width)
        keys.append(f"x{level}: &x{level} " + "[" * nesting + inner + "]" * nesting)
    return "\n".join(keys) + "\n"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("hooks: " + "[" * 5000 + "]" * 5000 + "\n", "nested more than 64 levels (line 1)"),
        (_alias_chain(levels=12, width=9, nesting=1), "more than 65536 values once its aliases"),
        ("hooks: &loop [*loop]\n", "more than 65536 values once its aliases"),
        (_alias_chain(levels=30, width=1, nesting=40), "nested more than 64 levels once its"),
    ],
    ids=["nested-5000-deep", "alias-bomb", "alias-to-itself", "deep-once-aliases-expand"],
)
def test_text_past_the_nesting_or_alias_bounds_is_refused_naming_the_bound(
    text: str, reason: str
) -> None:
    with pytest.raises(YamlTooLarge) as refused:
        load_documents(text.encode(), max_values=VALUES_MAX)
    assert reason in str(refused.value)


def test_aliases_within_the_bounds_read_as_pyyaml_reads_them() -> None:
    text = _alias_chain(levels=4, width=9, nesting=1) + "---\nplain: [1, 2]\n---\n"
    first, second = load_documents(text.encode(), max_values=VALUES_MAX)
    assert len(first["x3"]) == 9 and first["x3"][0][0] == [1] * 9
    assert second == {"plain": [1, 2]}


def test_a_key_twice_is_refused_only_where_asked() -> None:
    text = b"a: 1\nb: {c: 1, c: 2}\n"
    with pytest.raises(YamlRefused, match=r"^the key 'c' appears twice in one mapping \(line 2\)$"):
        load_documents(text, max_values=VALUES_MAX)
    assert load_documents(text, max_values=VALUES_MAX, unique_keys=False) == [
        {"a": 1, "b": {"c": 2}}
    ]


@pytest.mark.parametrize(
    ("content", "refusal", "reason"),
    [
        (b"a: 1\n" + b"#" * 100, YamlTooLarge, "larger than 64 bytes"),
        (b"name: \xc3\x28\n", YamlRefused, "not valid YAML"),
        (b"a: [1\n", YamlRefused, "not valid YAML (line 2)"),
    ],
    ids=["too-large", "not-utf8", "unclosed"],
)
def test_a_file_too_large_or_not_yaml_is_refused_in_one_line(
    tmp_path: Path, content: bytes, refusal: type[YamlRefused], reason: str
) -> None:
    path = tmp_path / "file.yaml"
    path.write_bytes(content)
    with pytest.raises(refusal) as refused:
        load_yaml_file(path, max_bytes=64, max_values=VALUES_MAX)
    assert reason in str(refused.value) and "\n" not in str(refused.value)


def test_a_file_that_cannot_be_read_says_why(tmp_path: Path) -> None:
    with pytest.raises(YamlRefused, match=r"^cannot be read \(No such file or directory\)$"):
        load_yaml_file(tmp_path / "absent.yaml", max_bytes=64, max_values=VALUES_MAX)
