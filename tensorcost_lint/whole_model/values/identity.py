"""Values told apart by identity, for the run's tables about particular objects.

CPython reuses an object's `id()` once the object is freed, and the run frees values all the time
(each statement's scratch, a temporary `Intermediates(...)`, a config copy). A table keyed by
`id(value)` alone then answers for a newer object that happens to take the old address: a memo hit
returning another object's method result, a module taking a dead module's path, an object marked
"incomplete" because an earlier one was. Every table here holds the objects it is keyed by, so an
id cannot be reused while the table lives, and looks them up by identity (`is`), never by equality
(two equal facts are two tensors, two storages).
"""

from __future__ import annotations


class Same:
    """A memo-key part that stands for one object by identity; it holds the object, so its id is not
    reused while the key lives (`repeat_kv(k)` and `repeat_kv(v)` with equal shapes are two calls)."""

    __slots__ = ("value",)

    def __init__(self, value) -> None:
        self.value = value

    def __eq__(self, other) -> bool:
        return type(other) is Same and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)

    def __repr__(self) -> str:
        return f"Same({type(self.value).__name__} at {id(self.value):#x})"


class IdentityMap:
    """object -> value, by identity, holding the object (a dict keyed by `id()` that cannot be fooled
    by a reused id). A `Pair((owner, name))` keys the owner by identity and the name by value."""

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        # id(obj) -> (obj, value); a Pair under (id(owner), *names) -> (owner, value). An int and a
        # tuple never compare equal, so the two kinds of key cannot meet. Looked up on every module
        # call of a run: kept to one dict lookup and one identity test.
        self._entries: dict = {}

    def __setitem__(self, key, value) -> None:
        if type(key) is Pair:
            self._entries[(id(key[0]), *key[1:])] = (key[0], value)
        else:
            self._entries[id(key)] = (key, value)

    def setdefault(self, key, value):
        found = self._found(key)
        if found is not None:
            return found[1]
        self[key] = value
        return value

    def _found(self, key):
        if type(key) is Pair:
            found = self._entries.get((id(key[0]), *key[1:]))
            return found if found is not None and found[0] is key[0] else None
        found = self._entries.get(id(key))
        return found if found is not None and found[0] is key else None

    def get(self, key, default=None):
        found = self._found(key)
        return default if found is None else found[1]

    def __getitem__(self, key):
        found = self._found(key)
        if found is None:
            raise KeyError(key)
        return found[1]

    def __contains__(self, key) -> bool:
        return self._found(key) is not None

    def __len__(self) -> int:
        return len(self._entries)

    def items(self):
        """(object, value) pairs, in insertion order."""
        return [(obj, value) for obj, value in self._entries.values()]

    def values(self):
        return [value for _, value in self._entries.values()]

    def by_id(self, ident: int, default=None):
        """The value of the object whose id is `ident`: for ids another table took from objects it
        holds (`ParameterLedger.ties`), so the id still names that object."""
        found = self._entries.get(ident)
        return found[1] if found is not None else default


class IdentitySet:
    """A set of objects by identity, holding them (`run.incomplete_objects`); `add((owner, name))`
    holds a pair the same way."""

    __slots__ = ("_map",)

    def __init__(self) -> None:
        self._map = IdentityMap()

    def add(self, key) -> None:
        self._map[key] = True

    def __contains__(self, key) -> bool:
        return key in self._map

    def __len__(self) -> int:
        return len(self._map)


class Pair(tuple):
    """`(obj, *names)` as one key of an IdentityMap: the object by identity, the names by value."""

    __slots__ = ()
