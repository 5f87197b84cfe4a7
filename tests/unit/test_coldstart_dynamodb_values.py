"""The DynamoDB state store writes the low-level client's typed values itself (so that a cold
start does not import boto3 for ``boto3.dynamodb.types``): what it sends and how it reads
back must be what boto3's serializer would have produced, value for value."""

from __future__ import annotations

from decimal import Decimal, Inexact, Overflow
from typing import Any

import pytest
from boto3.dynamodb.types import Binary, TypeDeserializer, TypeSerializer

from knowledge.adapters.aws.dynamodb_values import item as _item
from knowledge.adapters.aws.dynamodb_values import plain as _plain
from knowledge.adapters.aws.dynamodb_values import to_dynamo
from knowledge.adapters.aws.dynamodb_values import typed as _typed
from knowledge.adapters.aws.dynamodb_values import untyped as _untyped
from knowledge.adapters.aws.dynamodb_values import wire as _wire

PLAIN: list[Any] = [
    None,
    True,
    False,
    0,
    -7,
    1_800_000_000,
    10**37,
    0.5,
    -1.25e-7,
    1_800_000_000.25,
    3.0,
    Decimal("1E+2"),
    Decimal("-0.000"),
    "",
    "text with ünïcode and \x00",
    b"\x00\xffbytes",
    [],
    {},
    [1, "two", None, [3.5, {"four": False}]],
    {"config": '{"a": 1}', "counts": {"pages": 12, "ratio": 0.75}, "tags": ["x", "y"], "none": None},
]


@pytest.mark.parametrize("value", PLAIN, ids=repr)
def test_written_values_are_what_boto3_would_send(value: Any) -> None:
    assert _wire(value) == TypeSerializer().serialize(to_dynamo(value))


@pytest.mark.parametrize("value", PLAIN, ids=repr)
def test_read_values_are_what_boto3_would_read(value: Any) -> None:
    typed = TypeSerializer().serialize(to_dynamo(value))

    def unwrap(v: Any) -> Any:  # boto3 wraps binary in its Binary class; the store reads bytes
        if isinstance(v, Binary):
            return v.value
        if isinstance(v, dict):
            return {k: unwrap(x) for k, x in v.items()}
        if isinstance(v, list):
            return [unwrap(x) for x in v]
        return v

    assert _untyped(typed) == unwrap(TypeDeserializer().deserialize(typed))


def test_an_item_round_trips_with_plain_numbers_and_without_none() -> None:
    item = _item({"PK": "BOT#b", "n": 3, "f": 0.1, "gone": None, "m": {"l": [1.5, 2]}})
    assert "gone" not in item
    assert _plain(item) == {"PK": "BOT#b", "n": 3, "f": 0.1, "m": {"l": [1.5, 2]}}
    assert type(_plain(item)["n"]) is int


def test_sets_written_by_others_are_read_as_sets() -> None:
    assert _untyped({"SS": ["a", "b"]}) == {"a", "b"}
    assert _untyped({"NS": ["1", "2.5"]}) == {Decimal(1), Decimal("2.5")}
    assert _untyped({"BS": [b"a"]}) == {b"a"}


def test_numbers_dynamodb_would_round_or_refuse_are_refused_before_any_request() -> None:
    with pytest.raises(Inexact):
        _typed(10**40 + 1)  # 41 significant digits
    with pytest.raises(Overflow):
        _typed(Decimal("1E+200"))
    with pytest.raises(TypeError):
        _typed(Decimal("Infinity"))
    with pytest.raises(TypeError):
        _typed({1, 2})
    with pytest.raises(TypeError):
        _untyped({"S": "a", "N": "1"})

