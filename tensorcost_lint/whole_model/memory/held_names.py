"""What each name of a running function holds (memory_live's `Held` records), settled after every
statement in time proportional to what the statement can change, not to how many names the
function has bound: a generated forward of 100,000 lines `h1 = f(h0)`, `h2 = f(h1)`, ... binds
100,000 names, and settling each of them after each statement was quadratic (8,000 lines: 32 s).

A simple statement rebinds only names written in it (an assignment's targets, a walrus, the
receiver of `xs.append(t)` rebound to its new value, `B, T = x.shape` refining `x`); a callee runs
in its own frame on its own env. So after one, only those names are read again, with the names
whose storages can change while their value stays the same object (`volatile`: a tensor no op has
read yet, a plain object or record whose attributes change in place). A name's storages also
change when a storage becomes another (an alias) or a parameter, or a tensor's layout is replaced:
those bump a version, and the next settle reads every name, as does the first statement of a block
(its header may have bound names: `with ... as m`), a compound statement (a branch merge rebinds
any name), a `del` and a statement this walk does not know. The records are those the full reading
would make, in the env's order."""

from __future__ import annotations

import libcst as cst

from ...analysis.ast_positions import CHILD_FIELDS

# nodes holding no name: operators (`+`, `not`, `in`, `+=`), `*` and `/` among parameters, dots
_NO_NAMES = (cst.BaseBinaryOp, cst.BaseUnaryOp, cst.BaseBooleanOp, cst.BaseCompOp, cst.BaseAugOp, cst.ParamStar,
             cst.ParamSlash, cst.Dot, cst.ImportStar)
_SEQUENCES = (list, tuple)
_FIELDS: dict = {}  # node type -> the fields that may hold names, () for none, None: not known here


def _fields(kind):
    found = _FIELDS.get(kind, False)
    if found is False:
        found = CHILD_FIELDS.get(kind)
        if found is None and issubclass(kind, _NO_NAMES):
            found = ()
        _FIELDS[kind] = found
    return found


def written_names(statement) -> set | None:
    """Every name written in a simple statement line (a superset of what it can rebind), or None:
    a compound statement, a `del`, or a node whose fields this walk does not know."""
    if type(statement) is not cst.SimpleStatementLine:
        return None
    names, pending = set(), list(statement.body)
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is cst.Name:
            names.add(node.value)
            continue
        if kind is cst.Del:
            return None
        fields = _fields(kind)
        if fields is None:
            return None
        for name in fields:
            value = getattr(node, name)
            if type(value) in _SEQUENCES:
                pending.extend(value)
            elif value is not None and value is not cst.MaybeSentinel.DEFAULT:
                pending.append(value)  # a node (by type when it is popped: LibCST's ABCs are slow)
    return names


class Frame:
    """One running function; compared by identity (its names are slots `(frame, name)`)."""

    __slots__ = ("holding", "values", "volatile", "order", "env", "version")

    def __init__(self) -> None:
        self.holding: dict = {}  # name -> tuple of storages it holds
        self.values: dict = {}  # name -> the value `holding` was read from
        self.volatile: set = set()  # names whose storages may change while their value stays
        self.order: dict = {}  # name -> its place in `env` (names are only added at its end)
        self.env = None  # the env read last
        self.version = None  # the storage versions it was read under

    def forget(self) -> None:
        """Before reading every name again: what was read last no longer stands for the env."""
        self.values.clear()
        self.volatile.clear()
        self.order.clear()


def changed(frame: Frame, env: dict, names, storages) -> list | None:
    """[(name, storages now)] of the names among `names` and the volatile ones whose storages
    changed, in the env's order; None when this cannot be told without reading every name (a name
    held but no longer bound)."""
    values, volatile, holding, order = frame.values, frame.volatile, frame.holding, frame.order
    found, new = [], 0
    for name in names | volatile if volatile else names:
        if name.startswith("\0"):
            continue
        if name not in env:
            if holding.get(name):
                return None
            continue
        value = env[name]
        if name not in volatile and name in values and values[name] is value:
            continue
        now, unstable = storages(value)
        values[name] = value
        if unstable:
            volatile.add(name)
        else:
            volatile.discard(name)
        if name not in order:
            new += 1
        if holding.get(name, ()) != now:
            found.append((name, now))
    if new:
        _add_new(order, env, new)
    if len(found) > 1:
        found.sort(key=lambda item: order[item[0]])
    return found


def _add_new(order: dict, env: dict, count: int) -> None:
    """Place the `count` names bound since the last reading: the last ones of the env not placed
    yet (a dict keeps its insertion order), after every placed one."""
    fresh = []
    for name in reversed(env):
        if len(fresh) == count:
            break
        if name not in order and not name.startswith("\0"):
            fresh.append(name)
    start = len(order)
    for offset, name in enumerate(reversed(fresh)):
        order[name] = start + offset
