"""Sound dim unification: where a program can only run if two sizes are equal, an unsized dim is
the size it meets.

An input declared `x: float32 B T d_in` with `d_in` in no `dims`, fed to `nn.Linear(768, 256)`:
the contraction can only run when `d_in` is 768, so the run binds `d_in = 768` from then on (every
file it reads, and the totals) and says so — `d_in = 768, from contracted dim in_features at
model.py:12 (self.proj(x))` — rather than leaving the site unresolved with "cannot tell whether".
What a site's shape model could not prove equal (SiteShapes.undecided: contracted dims, the `k` of
a grouped matmul, batch dims) is unified when exactly one side is a bare name of no size and the
other has a size under the declared ones; two unsized names, or an expression (`d_in // 2`), stay
undecided. A later site that needs another size for the same name is a contraction mismatch, the
finding it always was: a contradiction is reported, never silently picked. Per-file linting never
unifies (its dims are what the user declared)."""

from __future__ import annotations

from dataclasses import dataclass

from shape_annotations import ShapeError, Sym, evaluate_dim, render_dim

MAX_UNIFIED = 1_000  # bindings per run: far above any model's input dims, a bound on hostile input


@dataclass(frozen=True)
class Unified:
    name: str
    size: int
    what: str  # the side it met: "contracted dim in_features"
    path: str
    line: int
    expression: str  # the site's code, whitespace folded (the text report shortens it to its callee)


def unify(run, ctx, node, undecided) -> bool:
    """Bind each unsized name the site's undecided pairs meet a sized side with; True when any was."""
    sizes = ctx.settings.sizes
    bound = False
    for what, a, b in undecided:
        for free, known in ((a, b), (b, a)):
            if type(free) is not Sym or free.name in sizes or len(run.unified) >= MAX_UNIFIED:
                continue
            try:
                size = evaluate_dim(known, sizes)
            except ShapeError:
                continue
            if size is None:
                continue
            line = ctx.position(node)[0]
            run.unified.append(Unified(free.name, size, f"{what} {render_dim(known)}", ctx.settings.path, line,
                                       " ".join(ctx.code(node).split())))
            run.tree.bind_dim(free.name, size)
            run.sizes[free.name] = size
            bound = True
            break
    return bound
