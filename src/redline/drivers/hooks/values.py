"""Frozen value classes for the hook's hot path, without the ``dataclasses`` import.

Every agent tool call starts a ``redline hook`` process; ``dataclasses`` brings ``inspect``
(and with it ``ast``, ``dis``, ``tokenize``), and each dataclass compiles its methods when
its module is imported. A pass-through call (a tool redline does not review) needs only
the payload and the answer, so those two are :class:`Value` subclasses: the same
constructor, equality, hash and repr, assignment refused (docs/performance.md).
"""

from __future__ import annotations

#: ``typing.TYPE_CHECKING`` without importing ``typing`` (type checkers treat any name
#: ``TYPE_CHECKING`` as true); the hook's fast path imports it from here.
TYPE_CHECKING = False


class Value:
    """A frozen record: subclasses name their ``_fields`` and set them with :meth:`_set`."""

    _fields: tuple[str, ...] = ()

    def _set(self, **values: object) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} of a frozen {type(self).__name__}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash((self.__class__.__name__, *self._values()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({shown})"
