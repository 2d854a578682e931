"""Registries: the open vocabularies (tiers, view kinds, disclosure modes, prompt protocols,
baselines, metrics) are each a `Registry`, a read-only mapping from name to entry in
registration order. A new entry is one `register` call, from inside the package or out of it; a
name nobody registered is refused by one error type, `UnknownName`, whose message names the valid
ones. `Live` is a selection of a registry that stays current as entries are registered."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, overload

T = TypeVar("T")


class UnknownName(ValueError):
    """A name no entry of a registry has: `unknown <kind> '<name>'; valid: <names>`."""


def _name(entry: Any) -> str:
    return str(entry.name)


class Registry(Mapping[str, T]):
    """Entries of one `kind` by name, in registration order.

    Args:
        kind: what an entry is, as messages name it (`tier`, `view kind`, `metric`).
        key: an entry's name (default: its `name`).
        pattern: the form a name must have (None: any), and `form` that form in words.
        check: what is wrong with an entry beyond its name, in words (None: nothing), such as
            a view kind nobody registered; read when the entry is registered.
    """

    def __init__(
        self,
        kind: str,
        *,
        key: Callable[[T], str] = _name,
        pattern: str | None = None,
        form: str = "",
        check: Callable[[T], str | None] = lambda entry: None,
    ) -> None:
        self.kind = kind
        self._key = key
        self._pattern = None if pattern is None else re.compile(pattern)
        self._form = form
        self._check = check
        self._entries: dict[str, T] = {}

    @classmethod
    def of_names(
        cls, kind: str, *, check: Callable[[T], str | None] = lambda entry: None
    ) -> Registry[T]:
        """A registry of `kind` whose names are lower-case identifiers (letters, digits and
        underscores, a letter first), as most are."""
        return cls(
            kind,
            pattern=r"[a-z][a-z0-9_]*",
            form="lower-case letters, digits and underscores",
            check=check,
        )

    def register(self, entry: T) -> T:
        """Add `entry` and return it; a ValueError for a name of the wrong form or one another
        entry has, or for what `check` finds wrong (registering the same entry again changes
        nothing)."""
        name = self._key(entry)
        if self._pattern is not None and not self._pattern.fullmatch(name):
            raise ValueError(f"{self.kind} name {name!r}: expected {self._form}")
        if self._entries.get(name, entry) is not entry:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        problem = self._check(entry)
        if problem is not None:
            raise ValueError(f"{self.kind} {name!r}: {problem}")
        self._entries[name] = entry
        return entry

    def unregister(self, name: str) -> T:
        """Remove the entry `name` and return it (a test's toy, once it is done); UnknownName
        for a name not registered."""
        entry = self.lookup(name)
        del self._entries[name]
        return entry

    def lookup(self, name: str) -> T:
        """The entry `name`, or UnknownName naming the valid ones."""
        try:
            return self._entries[name]
        except KeyError:
            raise self.unknown(name) from None

    def unknown(self, name: str) -> UnknownName:
        """The error for `name`, which no entry has."""
        return UnknownName(f"unknown {self.kind} {name!r}; valid: {', '.join(self._entries)}")

    def __getitem__(self, name: str) -> T:
        return self._entries[name]

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._entries)})"


class Live(Sequence[T]):
    """A read-only sequence computed by `select` each time it is read: a selection of a registry
    (a group of metrics, say) that includes what is registered after it is made."""

    def __init__(self, select: Callable[[], tuple[T, ...]]) -> None:
        self._select = select

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...

    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        return self._select()[index]

    def __iter__(self) -> Iterator[T]:
        return iter(self._select())

    def __len__(self) -> int:
        return len(self._select())

    def __repr__(self) -> str:
        return f"Live{self._select()!r}"
