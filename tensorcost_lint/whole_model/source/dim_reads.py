"""Contract 7a `warnings`: a dim given in `dims` or `--dim` whose name matches nothing the run reads
(a typo, or a constructor parameter whose default the code uses: `embed_dim: 192` when the built
model keeps its default 768) is reported, never silently ignored.

A dim counts as read when the run looked its size up (RecordedSizes: every file's sizes share one
set of names asked for, by decisions, loop counts, reshapes and the totals alike) or when it appears
in what the run recorded (an input's shape, a site's operand, a loop count), so a size reached by a
copy of the mapping is not reported as unread."""

from __future__ import annotations

from ..values.objects import BackwardMatmul, Called, Checkpointed, Choice, Repeat, SiteEntry


class RecordedSizes(dict):
    """The dim sizes of a run, remembering the names looked up (present or not)."""

    def __init__(self, values, reads: set | None = None) -> None:
        super().__init__(values)
        self.reads = set() if reads is None else reads

    def __getitem__(self, name):
        self.reads.add(name)
        return super().__getitem__(name)

    def __contains__(self, name) -> bool:
        self.reads.add(name)
        return super().__contains__(name)

    def get(self, name, default=None):
        self.reads.add(name)
        return super().get(name, default)


def recorded_like(template, values: dict) -> dict:
    """`values` recording into the same names as `template` when it records (a file's merged sizes)."""
    return RecordedSizes(values, template.reads) if type(template) is RecordedSizes else values


def unread_warnings(config_dims: dict, cli_dims: dict, sizes, entries, inputs, files) -> list[str]:
    """`--dim` names the run did not read; and project `dims` (shared by every file `check` reads)
    named like a parameter of code the run read but not read — the size the user meant for it was
    not used (a default was) — rather than every dim of the project's other files."""
    reads = set(sizes.reads) if type(sizes) is RecordedSizes else set()
    for spec in inputs:
        reads.update(_names(spec.dims))
    walk = _Walk(reads)
    walk.names(entries)
    if walk.cut:  # a dim named only past the cut would be reported unread: say what is not known
        return [f"which dims this run reads is not known: its records hold more than {_MAX_WALKED:,} entries "
                f"(bounded work); no dim is reported unread"]
    unread = [name for name in {**config_dims, **cli_dims} if name not in reads]
    parameters = _parameter_names(files) if any(name not in cli_dims for name in unread) else set()
    return [f"dim {name!r} = {cli_dims.get(name, config_dims.get(name))} (dims or --dim) matches nothing "
            f"this run reads" for name in unread if name in cli_dims or name in parameters]


def _parameter_names(files) -> set:
    """Parameter names of the functions and methods in the files the run read (their top-level
    definitions, walked on the stdlib tree)."""
    import ast

    found = set()
    for source in files:
        statements = getattr(getattr(source, "definitions", None), "statements", None) or {}
        for statement in statements.values():
            for node in ast.walk(statement):
                if isinstance(node, ast.arg):
                    found.add(node.arg)
    return found


_MAX_WALKED = 200_000  # distinct entries walked: a bound on a hostile run


class _Walk:
    """The dim names the recorded entries hold. A callee's summary is one list shared by all its
    calls (objects.Called), read once: the walk is linear in distinct records, and a run past
    _MAX_WALKED of them is cut and says so (`cut`), never read as "nothing named there"."""

    def __init__(self, reads: set) -> None:
        self.reads = reads
        self.walked = 0
        self.lists: set = set()  # ids of the entry lists read (each alive in the run's tree)
        self.cut = False

    def names(self, entries) -> None:
        if id(entries) in self.lists or self.cut:
            return
        self.lists.add(id(entries))
        reads = self.reads
        for entry in entries:
            self.walked += 1
            if self.walked > _MAX_WALKED:
                self.cut = True
                return
            kind = type(entry)
            if kind is SiteEntry:
                for operand in entry.site.operands:
                    reads.update(_names(getattr(operand, "shape", None) or ()))
            elif kind is BackwardMatmul:
                reads.update(_names(entry.factors))
            elif kind is Repeat:
                reads.update(_names((entry.count,)))
                self.names(entry.entries)
            elif kind in (Called, Checkpointed):
                self.names(entry.entries)
            elif kind is Choice:
                for side in entry.sides:
                    self.names(side)


def _names(dims) -> set:
    found, pending = set(), list(dims or ())
    while pending:
        dim = pending.pop()
        name = getattr(dim, "name", None)
        if type(name) is str:
            found.add(name)
        for part in ("left", "right", "operand", "operands", "args"):
            value = getattr(dim, part, None)
            if value is not None:
                pending.extend(value if type(value) in (tuple, list) else (value,))
    return found
