"""Kubernetes quantities are read exactly, and anything else is a QuantityError."""

from __future__ import annotations

from fractions import Fraction

import pytest

from brupop.domain.cluster.quantity import (
    MAX_QUANTITY_LENGTH,
    QuantityError,
    cpu_millis,
    memory_bytes,
    parse_quantity,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", Fraction(1)),
        ("250m", Fraction(1, 4)),
        ("1.5", Fraction(3, 2)),
        (".5", Fraction(1, 2)),
        ("2.", Fraction(2)),
        ("+3", Fraction(3)),
        ("-1", Fraction(-1)),
        ("100n", Fraction(1, 10**7)),
        ("7u", Fraction(7, 10**6)),
        ("1k", Fraction(1000)),
        ("1M", Fraction(10**6)),
        ("1G", Fraction(10**9)),
        ("2T", Fraction(2 * 10**12)),
        ("1P", Fraction(10**15)),
        ("1E", Fraction(10**18)),
        ("1Ki", Fraction(1024)),
        ("512Mi", Fraction(512 * 1024**2)),
        ("1.5Gi", Fraction(3 * 1024**3, 2)),
        ("1Ti", Fraction(1024**4)),
        ("1Pi", Fraction(1024**5)),
        ("1Ei", Fraction(1024**6)),
        ("1e3", Fraction(1000)),
        ("1E3", Fraction(1000)),
        ("25e-2", Fraction(1, 4)),
        ("2e+1", Fraction(20)),
    ],
)
def test_quantities_of_every_suffix_are_read_exactly(text: str, value: Fraction) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize(
    "text",
    ["", ".", "+", "m", "1 ", " 1", "1x", "1mi", "1KI", "1e", "1e1.5", "1.2.3", "--1", "1Gi0"],
)
def test_text_that_is_not_a_quantity_is_a_quantity_error(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_a_quantity_longer_than_the_bound_is_refused_without_being_read() -> None:
    with pytest.raises(QuantityError):
        parse_quantity("1" * (MAX_QUANTITY_LENGTH + 1))
    assert parse_quantity("1" * MAX_QUANTITY_LENGTH) == int("1" * MAX_QUANTITY_LENGTH)


def test_an_exponent_beyond_the_bound_is_refused() -> None:
    with pytest.raises(QuantityError):
        parse_quantity("1e999")
    assert parse_quantity("1e30") == 10**30


def test_cpu_is_whole_millicores_rounded_up() -> None:
    assert cpu_millis("250m") == 250
    assert cpu_millis("1.5") == 1500
    assert cpu_millis("0.1") == 100
    assert cpu_millis("1n") == 1
    assert cpu_millis("2") == 2000


def test_memory_is_whole_bytes_rounded_up() -> None:
    assert memory_bytes("512Mi") == 512 * 1024**2
    assert memory_bytes("1G") == 10**9
    assert memory_bytes("1500m") == 2
    assert memory_bytes("128974848") == 128974848


def test_a_negative_resource_amount_is_a_quantity_error() -> None:
    with pytest.raises(QuantityError):
        cpu_millis("-1")
    with pytest.raises(QuantityError):
        memory_bytes("-1Mi")
