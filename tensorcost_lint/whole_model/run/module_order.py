"""A module's top-level statements in the order Python runs them. A name's value at a point of the
module is its last binding before that point, then every change made to it since, each applied as
its statement runs (`NAMES.update({...})`, `NAMES["k"] = v`, `NAMES += [...]`); a binding that
reads the name's previous value (`NAMES = OrderedDict(**{...}, **NAMES)`) reads the binding before
it, as Python does, rather than itself. A name the module does not bind is followed through its
imports to the module that does, with that module's value once it has run (an import runs the
whole module first).

A value is the run's own (value semantics): a table changed in place by another module that
imports it is changed as that module's name reads it; read through its defining module, it is the
table that module built (a package that extends its generated tables reads them through the module
that extends them).

Values are evaluated lazily, one binding at a time, never the whole module: a file such as
transformers' `modeling_auto.py` binds a hundred mappings of which a model reads two. Each binding
and each change is evaluated once per run (ModelRun.module_values)."""

from __future__ import annotations

import ast

import libcst as cst

from ...analysis.cst_parse import parse_module
from . import module_globals
from .model_flow import ModelFlow


def value_at(run, source, name: str, before: int | None = None):
    """The value `name` holds in `source` just before line `before` (None: once the module has run);
    once a function has rebound it (`global name`), the binding that function left (module_globals)."""
    rebound, value = module_globals.read(run, source, name, before)
    if rebound:
        return value
    events = [event for event in source.timeline.get(name, ()) if before is None or event[0] < before]
    start = next((i for i in range(len(events) - 1, -1, -1) if events[i][1] != "change"), None)
    if start is None or events[start][1] == "import":
        value = _imported(run, source, name)
    elif events[start][1] == "assign":
        line, _, statement = events[start]
        value = run.top_level_value((id(source), name, line), lambda: _assigned_value(source, statement, name), line)
    else:
        return None  # a def, a class or an unpacking binds it: not a value the timeline computes
    for line, _, statement in events[(start + 1) if start is not None else 0:]:
        value = _changed(run, source, name, line, statement, value)
    return value


def _imported(run, source, name: str):
    """The value of `name` in the module it is imported from (`from .auto_mappings import NAMES`),
    or in a star-imported module, after that module has run."""
    found = run.tree._follow(source, name, lambda file, n: n if file is not source and _binds(file, n) else None,
                             stop_at_definitions=True)
    if found is None or module_globals.rebound(run, found[0], found[1]):
        return None  # the importer's binding was made at import, before the function rebound the original
    return value_at(run, found[0], found[1])


def _binds(file, name: str) -> bool:
    return any(kind != "import" for _, kind, _ in file.timeline.get(name, ()))


def _changed(run, source, name: str, line: int, statement, value):
    """`value` after the top-level statement at `line` changed it, the statement run once per run
    on the value the name held just before it (what follows reads its result)."""
    key = ("change", id(source), name, line)
    if key in run.module_values:
        return run.module_values[key]
    run.module_values[key] = None  # a change that reads its own result stays unknown
    node = _statement(source, statement)
    if node is None:
        return None
    flow = ModelFlow(source.ctx, {name: value}, run=run, source=source)
    flow.evaluator.top_line = line
    run.building += 1
    run.importing += 1
    try:
        with run.collecting([]):
            flow.run([node])
    finally:
        run.building -= 1
        run.importing -= 1
    run.module_values[key] = flow.env.get(name)
    return run.module_values[key]


def _statement(source, statement):
    """The LibCST statement line of a top-level `statement` (an `ast` node of `source`), parsed from
    its own lines; its positions join the file's context."""
    lines = source.definitions.lines
    try:
        module = parse_module("".join(lines[statement.lineno - 1:statement.end_lineno]))
    except (cst.ParserSyntaxError, RecursionError):
        return None
    line = module.body[0] if module.body else None
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None  # `a = 1; NAMES.update(a)`: statements sharing a line are not told apart
    source.ctx.add_piece(module, statement.lineno - 1)
    return line


def _assigned_value(source, statement, name: str):
    """(source, the LibCST value node) of the top-level assignment `statement` binding `name`."""
    line = _statement(source, statement)
    small = line.body[0] if line is not None else None
    if isinstance(statement, (ast.Assign, ast.AnnAssign)) and isinstance(small, (cst.Assign, cst.AnnAssign)) \
            and small.value is not None:
        return source, small.value
    return None
