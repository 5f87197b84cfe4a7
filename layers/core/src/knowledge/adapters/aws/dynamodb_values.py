"""DynamoDB's typed values, both ways: Python values (floats, ints, strings, lists, maps) to the
low-level client's ``{"S": ...}``, ``{"N": ...}``, ``{"M": {...}}`` and back, with every number
checked against what DynamoDB can hold before a request is made (a float that would be rounded
or refused raises here). The store uses the low-level client so boto3's resource layer stays
out of every cold start."""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import Clamped, Context, Decimal, Inexact, Overflow, Rounded, Underflow
from typing import Any

from ...errors import InvalidInput

#: what a DynamoDB number can hold (38 significant digits, exponents within about +-126): a
#: value it would round or refuse raises here (``decimal.Inexact``, ``Overflow``...), before a request
_NUMBERS = Context(Emin=-128, Emax=126, prec=38, traps=[Clamped, Overflow, Inexact, Rounded, Underflow])


# -- numbers: the one place floats and Decimals meet --------------------------------------


def to_dynamo(value: Any) -> Any:
    """A plain value made storable: floats become exact Decimals (via ``repr``; integral ones
    without a fraction, so epoch seconds read as integers), recursively."""
    if isinstance(value, bool) or value is None or isinstance(value, str | int | Decimal | bytes):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInput("numbers must be finite")
        return Decimal(int(value)) if value.is_integer() else Decimal(repr(value))
    if isinstance(value, Mapping):
        return {str(k): to_dynamo(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_dynamo(v) for v in value]
    raise TypeError(f"cannot store a {type(value).__name__}")


def from_dynamo(value: Any) -> Any:
    """A stored value made plain: integral Decimals become ints, the others floats."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: from_dynamo(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_dynamo(v) for v in value]
    return value


# -- the low-level client's typed values ({"S": ...}, {"N": ...}, {"M": {...}}...) ------------
# Written here rather than taken from boto3.dynamodb.types: importing that imports boto3 and
# s3transfer, tens of ms of every cold start of a function that never uses either.


def number(value: int | Decimal) -> str:
    number = _NUMBERS.create_decimal(value)
    if not number.is_finite():
        raise TypeError("DynamoDB numbers must be finite")
    return str(number)


def typed(value: Any) -> dict[str, Any]:
    """A stored value (what :func:`to_dynamo` returns) as the client's typed value."""
    if value is None:
        return {"NULL": True}
    if isinstance(value, bool):
        return {"BOOL": value}
    if isinstance(value, str):
        return {"S": value}
    if isinstance(value, int | Decimal):
        return {"N": number(value)}
    if isinstance(value, bytes | bytearray):
        return {"B": value}
    if isinstance(value, Mapping):
        return {"M": {k: typed(v) for k, v in value.items()}}
    if isinstance(value, list | tuple):
        return {"L": [typed(v) for v in value]}
    raise TypeError(f"cannot store a {type(value).__name__}")


def untyped(attribute: Mapping[str, Any]) -> Any:
    """A typed value the client returned, as a Python value (numbers as ``Decimal``, sets as
    ``set``, binary as ``bytes``); :func:`from_dynamo` makes the numbers plain."""
    if len(attribute) != 1:
        raise TypeError(f"not a DynamoDB value: {sorted(attribute)!r}")
    ((kind, raw),) = attribute.items()
    if kind in ("S", "BOOL", "B"):
        return raw
    if kind == "N":
        return _NUMBERS.create_decimal(raw)
    if kind == "NULL":
        return None
    if kind == "M":
        return {k: untyped(v) for k, v in raw.items()}
    if kind == "L":
        return [untyped(v) for v in raw]
    if kind in ("SS", "BS"):
        return set(raw)
    if kind == "NS":
        return {_NUMBERS.create_decimal(n) for n in raw}
    raise TypeError(f"unknown DynamoDB type {kind!r}")


def wire(value: Any) -> dict[str, Any]:
    return typed(to_dynamo(value))


def item(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """A low-level item; attributes whose value is None are left out (absent, not NULL)."""
    return {k: wire(v) for k, v in attrs.items() if v is not None}


def plain(item: Mapping[str, Any]) -> dict[str, Any]:
    return {k: from_dynamo(untyped(v)) for k, v in item.items()}
