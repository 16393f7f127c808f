"""Label selectors in kubectl's text form (`role=canary,zone in (a,b),!spot`), parsed and checked.

The CRD schema can only bound a selector's length; its syntax, keys and values are checked
here, by the rules the kube-apiserver applies to labels (qualified names, 63-character values).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

SELECTOR_MAX_LENGTH = 1024
REQUIREMENTS_MAX = 20
_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
_LABEL_NAME = re.compile(rf"^{_NAME}$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_KEY = r"[^\s!=(),]+"
_SET_TERM = re.compile(rf"^(?P<key>{_KEY})\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)$")
_EQUALITY_TERM = re.compile(rf"^(?P<key>{_KEY})\s*(?P<op>==|=|!=)\s*(?P<value>[^\s!=(),]*)$")
_ABSENT_TERM = re.compile(rf"^!\s*(?P<key>{_KEY})$")
_PRESENT_TERM = re.compile(rf"^(?P<key>{_KEY})$")


class LabelSelectorError(ValueError):
    """A selector text that Kubernetes would refuse; the message says which part."""


class SelectorOperator(StrEnum):
    """How one requirement tests a label."""

    EQUALS = "="
    NOT_EQUALS = "!="
    IN = "in"
    NOT_IN = "notin"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"


@dataclass(frozen=True)
class Requirement:
    """One comma-separated term of a selector."""

    key: str
    operator: SelectorOperator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """True when `labels` satisfy this term (a missing key fails `=` and `in`)."""
        present = self.key in labels
        value = labels.get(self.key)
        match self.operator:
            case SelectorOperator.EQUALS | SelectorOperator.IN:
                return present and value in self.values
            case SelectorOperator.NOT_EQUALS | SelectorOperator.NOT_IN:
                return not present or value not in self.values
            case SelectorOperator.EXISTS:
                return present
            case SelectorOperator.DOES_NOT_EXIST:
                return not present


@dataclass(frozen=True)
class LabelSelector:
    """Every requirement must hold; the text is kept to show it back to people."""

    text: str
    requirements: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        """True when every requirement holds for `labels`."""
        return all(requirement.matches(labels) for requirement in self.requirements)


def parse_label_selector(text: str) -> LabelSelector:
    """The selector `text` means; LabelSelectorError for anything Kubernetes would refuse.
    An empty selector is refused: it would select every node, which is never meant here."""
    if len(text) > SELECTOR_MAX_LENGTH:
        raise LabelSelectorError(f"longer than {SELECTOR_MAX_LENGTH} characters")
    terms = _split_terms(text)
    if not terms:
        raise LabelSelectorError("empty selector (it would select every node)")
    if len(terms) > REQUIREMENTS_MAX:
        raise LabelSelectorError(f"more than {REQUIREMENTS_MAX} requirements")
    return LabelSelector(text=text.strip(), requirements=tuple(_requirement(t) for t in terms))


def check_label_key(key: str) -> str:
    """`key` if it is a valid label key (`[prefix/]name`); LabelSelectorError otherwise."""
    prefix, _, name = key.rpartition("/")
    if "/" in key and (len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        raise LabelSelectorError(f"label key {key!r}: bad prefix {prefix!r} (a DNS subdomain)")
    if len(name) > 63 or not _LABEL_NAME.match(name):
        raise LabelSelectorError(
            f"label key {key!r}: the name must be 1-63 letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit"
        )
    return key


def check_label_value(value: str) -> str:
    """`value` if it is a valid label value (empty, or up to 63 name characters)."""
    if value and (len(value) > 63 or not _LABEL_NAME.match(value)):
        raise LabelSelectorError(
            f"label value {value!r}: at most 63 letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit"
        )
    return value


def _split_terms(text: str) -> list[str]:
    """Split on the commas that are not inside `in (...)` lists."""
    terms: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth not in (0, 1):
            raise LabelSelectorError(f"unbalanced parentheses in {text!r}")
        if char == "," and depth == 0:
            terms.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    if depth != 0:
        raise LabelSelectorError(f"unbalanced parentheses in {text!r}")
    terms.append("".join(current).strip())
    if len(terms) > 1 and not all(terms):
        raise LabelSelectorError(f"empty requirement in {text!r}")
    return [term for term in terms if term]


def _requirement(term: str) -> Requirement:
    if match := _SET_TERM.match(term):
        values = tuple(v.strip() for v in match["values"].split(","))
        if not values or not all(values):
            raise LabelSelectorError(f"{term!r}: an empty value in the list")
        operator = SelectorOperator.IN if match["op"] == "in" else SelectorOperator.NOT_IN
        return _checked(match["key"], operator, values)
    if match := _EQUALITY_TERM.match(term):
        equals = match["op"] in ("=", "==")
        operator = SelectorOperator.EQUALS if equals else SelectorOperator.NOT_EQUALS
        return _checked(match["key"], operator, (match["value"],))
    if match := _ABSENT_TERM.match(term):
        return _checked(match["key"], SelectorOperator.DOES_NOT_EXIST, ())
    if match := _PRESENT_TERM.match(term):
        return _checked(match["key"], SelectorOperator.EXISTS, ())
    raise LabelSelectorError(f"{term!r} is not a requirement (key, !key, key=v, key in (a,b))")


def _checked(key: str, operator: SelectorOperator, values: tuple[str, ...]) -> Requirement:
    check_label_key(key)
    for value in values:
        check_label_value(value)
    return Requirement(key=key, operator=operator, values=values)
