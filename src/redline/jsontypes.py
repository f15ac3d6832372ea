"""The one JSON alias: a value that survives a JSON round trip.

What an agent sends (a hook's payload, an ACP tool call's raw input), what redline writes
back to it, the agents' settings files and a model provider's request bodies are typed
with these instead of ``Any``, so mypy makes every reader check what it got. The alias is
a real object at run time (``typing.get_type_hints`` resolves it: the typed events read
their fields back with it); modules that only annotate import it under ``TYPE_CHECKING``.
"""

from __future__ import annotations

from typing import TypeAlias

from typing_extensions import TypeAliasType

#: A JSON value: an object, an array, a string, a number, true/false or null.
JsonValue = TypeAliasType(
    "JsonValue", "dict[str, JsonValue] | list[JsonValue] | str | int | float | bool | None"
)
#: A JSON object (a payload, a settings file, a tool's input).
JsonObject: TypeAlias = dict[str, JsonValue]

__all__ = ["JsonObject", "JsonValue"]
