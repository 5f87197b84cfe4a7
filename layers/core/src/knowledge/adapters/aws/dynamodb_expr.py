"""Update and condition expressions for DynamoDB with placeholder names and values."""

from __future__ import annotations

from typing import Any

from .dynamodb_table import DUE_PARTITION_KEY, DUE_SORT_KEY
from .dynamodb_values import wire


class Expression:
    """Builds update/condition expressions with placeholder names and values."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.values: dict[str, Any] = {}
        self.sets: list[str] = []
        self.removes: list[str] = []

    def n(self, attr: str) -> str:
        for placeholder, name in self.names.items():
            if name == attr:
                return placeholder
        placeholder = f"#n{len(self.names)}"
        self.names[placeholder] = attr
        return placeholder

    def v(self, value: Any) -> str:
        placeholder = f":v{len(self.values)}"
        self.values[placeholder] = wire(value)
        return placeholder

    def set(self, attr: str, value: Any) -> None:
        if value is None:
            self.remove(attr)
        else:
            self.sets.append(f"{self.n(attr)} = {self.v(value)}")

    def set_raw(self, clause: str) -> None:
        self.sets.append(clause)

    def remove(self, attr: str) -> None:
        self.removes.append(self.n(attr))

    def set_due(self, due: tuple[str, float] | None) -> None:
        self.set(DUE_PARTITION_KEY, due[0] if due else None)
        self.set(DUE_SORT_KEY, due[1] if due else None)

    def equals_or_absent(self, attr: str, value: Any) -> str:
        if value is None:
            return f"attribute_not_exists({self.n(attr)})"
        return f"{self.n(attr)} = {self.v(value)}"

    def update(self, condition: str | None = None, **extra: Any) -> dict[str, Any]:
        parts = []
        if self.sets:
            parts.append("SET " + ", ".join(self.sets))
        if self.removes:
            parts.append("REMOVE " + ", ".join(dict.fromkeys(self.removes)))
        out: dict[str, Any] = {"UpdateExpression": " ".join(parts), **extra}
        if condition:
            out["ConditionExpression"] = condition
        return self._placeholders(out)

    def condition(self, condition: str, **extra: Any) -> dict[str, Any]:
        return self._placeholders({"ConditionExpression": condition, **extra})

    def _placeholders(self, out: dict[str, Any]) -> dict[str, Any]:
        if self.names:
            out["ExpressionAttributeNames"] = dict(self.names)
        if self.values:
            out["ExpressionAttributeValues"] = dict(self.values)
        return out
