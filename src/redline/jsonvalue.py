"""JSON values as types: what ``json.loads`` returns and ``json.dumps`` takes.

The one alias for data redline passes through without a schema of its own: a custom tool's
``details``, an agent's tool input, a queue record's raw fields. Lowest layer: it imports
nothing of redline's, so every layer may use it.
"""

from __future__ import annotations

from typing import TypeAlias

#: Any JSON value (objects with string keys).
JSONValue: TypeAlias = "str | int | float | bool | list[JSONValue] | dict[str, JSONValue] | None"
#: A JSON object.
JSONObject: TypeAlias = "dict[str, JSONValue]"

__all__ = ["JSONObject", "JSONValue"]
