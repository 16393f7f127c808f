"""Label selectors in kubectl's syntax: what they select, and what Kubernetes would refuse."""

from __future__ import annotations

import pytest

from brupop.domain.cluster.label_selector import (
    LabelSelectorError,
    SelectorOperator,
    parse_label_selector,
)

CANARY = {"brupop.bottlerocket.aws/canary": "true", "zone": "a"}
OTHER = {"zone": "b", "spot": ""}


@pytest.mark.parametrize(
    ("selector", "selects_canary", "selects_other"),
    [
        ("brupop.bottlerocket.aws/canary=true", True, False),
        ("brupop.bottlerocket.aws/canary==true", True, False),
        ("zone!=a", False, True),
        ("missing!=x", True, True),
        ("zone in (a, c)", True, False),
        ("zone notin (a,c)", False, True),
        ("spot", False, True),
        ("!spot", True, False),
        ("zone in (a,b),!spot", True, False),
        ("  zone = a ,  brupop.bottlerocket.aws/canary ", True, False),
    ],
)
def test_a_selector_selects_the_nodes_whose_labels_satisfy_every_term(
    selector: str, selects_canary: bool, selects_other: bool
) -> None:
    parsed = parse_label_selector(selector)
    assert (parsed.matches(CANARY), parsed.matches(OTHER)) == (selects_canary, selects_other)


def test_set_terms_keep_their_values_and_commas_inside_parentheses() -> None:
    parsed = parse_label_selector("zone in (a,b,c),tier=web")
    assert [(r.key, r.operator, r.values) for r in parsed.requirements] == [
        ("zone", SelectorOperator.IN, ("a", "b", "c")),
        ("tier", SelectorOperator.EQUALS, ("web",)),
    ]


def test_an_equality_with_an_empty_value_selects_the_empty_label() -> None:
    assert parse_label_selector("spot=").matches(OTHER)
    assert not parse_label_selector("spot=").matches(CANARY)


@pytest.mark.parametrize(
    "selector",
    [
        "",
        "   ",
        "a=b,,c=d",
        "a=b,",
        "zone in (a,b",
        "zone in a,b)",
        "zone in ()",
        "zone in (a,,b)",
        "zone between (a,b)",
        "a=b=c",
        "a b",
        "-bad=x",
        "bad-=x",
        "Example.COM/name=x",
        "a/b/c=x",
        f"{'k' * 64}=x",
        f"{'p' * 254}/name=x",
        "zone=-a",
        f"zone={'v' * 64}",
        "zone=a b",
        ",".join(f"k{i}=v" for i in range(21)),
        "a=b," * 300,
    ],
)
def test_selectors_kubernetes_would_refuse_are_refused(selector: str) -> None:
    with pytest.raises(LabelSelectorError):
        parse_label_selector(selector)


def test_twenty_requirements_and_long_prefixed_keys_are_accepted() -> None:
    parsed = parse_label_selector(",".join(f"k{i}=v" for i in range(20)))
    assert len(parsed.requirements) == 20
    key = f"{'p' * 63}.example.com/{'n' * 63}"
    assert parse_label_selector(f"{key}={'v' * 63}").matches({key: "v" * 63})
