"""Module globals a function rebinds (`global NAME`), as Python binds them: the statement declares
the name for the whole body, wherever it stands; the body reads and assigns the module's binding.

A running function holds a declared name as a name of its own, seeded with the module's value, so
undecided branches, loops and `try` paths join it as they join any name. When the function ends,
the value every way out of it agrees on (each `return`, and the end of the body) becomes the
module's binding for the rest of the run; ways out that disagree leave it unknown. While the
function runs, other code reading the name reads it unknown: its value is the running function's,
which may have changed it already. A nested call that rebinds the same name makes the outer
function's value unknown (the outer one holds the binding it read before the call).

A generator (a `@contextmanager` function) runs as its caller drives it, which the run does not
follow: the names it declares are unknown once it has run.

A module's top-level values read the binding the module was imported with, so they never see a
function's rebinding: while one is computed (`ModelRun.importing`), a rebound name is unknown, as
before. A name imported from the module (`from config import _FLAG`) is the importer's own binding,
made at import: once a function has rebound the original, it is unknown too."""

from __future__ import annotations

import re

import libcst as cst

from ...analysis.facts import TensorFact

_DECLARED: dict = {}  # id(FunctionDef) -> (the node, the names its `global` statements declare)


class GlobalFrame:
    """One running function's declared globals: (id(file), name) -> name, the values each way out
    left, and the names a nested call rebound meanwhile."""

    def __init__(self, source, names, generator: bool) -> None:
        self.source = source
        self.generator = generator  # run to its end at once, not step by step as its caller drives it
        self.keys = {(id(source), name): name for name in names}
        self.exits: list = []
        self.conflicted: set = set()
        self.seeds: dict = {}


def declared_globals(ctx, node: cst.FunctionDef) -> tuple:
    """The names `node`'s own body declares `global` (not those of functions or classes inside it),
    and whether it may be a generator (`yield` anywhere in its text: a generator read as one is only
    ever less known)."""
    cached = _DECLARED.get(id(node))
    if cached is not None and cached[0] is node:
        return cached[1]
    text = ctx.node_code(node) if isinstance(node, cst.FunctionDef) else ""
    names: list = []
    if "global" in text:
        for small in _small_statements(node.body):
            if isinstance(small, cst.Global):
                names.extend(item.name.value for item in small.names if item.name.value not in names)
    _DECLARED[id(node)] = (node, (tuple(names), re.search(r"\byield\b", text) is not None))
    return _DECLARED[id(node)][1]


def _small_statements(block):
    """The simple statements of a block and of the blocks inside it, by the statements' own fields
    (LibCST's `children` rebuilds every node it passes)."""
    pending = [block]
    while pending:
        current = pending.pop()
        if isinstance(current, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(current, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            yield from current.body
            continue
        if isinstance(current, cst.IndentedBlock):
            pending.extend(current.body)
            continue
        for field in ("body", "orelse", "handlers", "finalbody", "cases"):
            value = getattr(current, field, None)
            if isinstance(value, (list, tuple)):
                pending.extend(value)
            elif isinstance(value, cst.CSTNode):
                pending.append(value)


def enter(run, source, node: cst.FunctionDef, env: dict) -> GlobalFrame | None:
    """Seed `env` with the module values of the names `node` declares global and open its frame
    (None: it declares none). Every running function pushes its frame, so the innermost is its own."""
    names, generator = declared_globals(source.ctx, node)
    frame = None
    if names:
        frame = GlobalFrame(source, names, generator)
        for key, name in frame.keys.items():
            env[name] = frame.seeds[key] = run.module_value(source, name)
    run.global_frames.append(frame)
    return frame


def record_exit(run, env: dict) -> None:
    """A way out of the running function (`return`): what its declared globals hold there."""
    frame = run.global_frames[-1] if run.global_frames else None
    if frame is not None:
        frame.exits.append({key: env.get(name) for key, name in frame.keys.items()})


def leave(run, frame: GlobalFrame | None, env: dict, fell_off: bool) -> None:
    """Close the running function's frame: each declared name's binding is what every way out
    agrees on (`fell_off`: the end of the body is one), unknown otherwise."""
    run.global_frames.pop()
    if frame is None:
        return
    if fell_off:
        frame.exits.append({key: env.get(name) for key, name in frame.keys.items()})
    for key in frame.keys:
        values = [exit_[key] for exit_ in frame.exits]
        value = values[0] if values and key not in frame.conflicted and all(_same(values[0], v) for v in values) \
            and not frame.generator else None
        if key in run.global_values or frame.generator or not _same(value, frame.seeds[key]):
            write(run, key, value)  # a name the function left as it found it stays the module's


def write(run, key, value) -> None:
    if key in run.global_values and _same(run.global_values[key], value):
        return
    run.global_values[key] = value
    run.global_version += 1  # a memoised call may have read the old value (code_calls' memo key)
    for outer in run.global_frames:
        if outer is not None and key in outer.keys:
            outer.conflicted.add(key)


def read(run, source, name: str, before) -> tuple[bool, object]:
    """(True, value) when `name` of `source` is a function's binding now, else (False, None)."""
    key = (id(source), name)
    if any(frame is not None and key in frame.keys for frame in run.global_frames):
        return True, None  # the running function's value
    if key not in run.global_values:
        return False, None
    if before is not None or run.importing:
        return True, None  # a top-level value reads the binding it was imported with
    return True, run.global_values[key]


def rebound(run, source, name: str) -> bool:
    key = (id(source), name)
    return key in run.global_values or any(frame is not None and key in frame.keys for frame in run.global_frames)


def memo_state(run) -> tuple:
    """What a memoised call's result may depend on beyond its arguments: the bindings functions
    made, and the names running functions hold."""
    return run.global_version, tuple(tuple(frame.keys) for frame in run.global_frames if frame is not None)


def restore(run, values: dict) -> None:
    """The bindings as `values` holds them (a side of an undecided `if` starts from what was before).
    A change is a new version: a call memoised on the other side read the other bindings."""
    current = run.global_values
    if current.keys() != values.keys() or any(current[key] is not value for key, value in values.items()):
        current.clear()
        current.update(values)
        run.global_version += 1


_MISSING = object()


def join_sides(run, before: dict, then_values: dict, else_values: dict) -> None:
    """After an undecided `if`: a binding either side left is the module's only where both sides
    left the same one (a function rebinding it ran on one side only: `if os.environ...:
    load_fused()`); otherwise unknown, as a name two paths bind differently is."""
    restore(run, before)
    for key in {**then_values, **else_values}:
        a, b = then_values.get(key, _MISSING), else_values.get(key, _MISSING)
        if a is _MISSING or b is _MISSING:  # rebound on one side, never before: the other left the import's
            write(run, key, None)
        else:
            write(run, key, a if _same(a, b) else None)


def _same(a, b) -> bool:
    if a is b:
        return True
    if a is None or b is None or type(a) is not type(b) or type(a) is TensorFact:
        return False
    try:
        return bool(a == b)
    except Exception:  # a value without a plain equality
        return False
