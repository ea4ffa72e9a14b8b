"""TCL001 and TCL002: the shape contracts users write (annotations, shape comments, pragmas)."""

from __future__ import annotations

from ..analysis.problems import Contradiction, EinopsMisfit, Unparseable
from .base import Example, Rule
from .messages import shape_text, sized_dim


class ShapeParseError(Rule):
    code = "TCL001"
    name = "unparseable-shape"
    summary = "shape annotation, shape comment or pragma cannot be parsed"
    severity = "warning"
    what_it_does = (
        "Checks that every jaxtyping shape string (`Float[Tensor, \"batch seq d\"]`), every `shape:` comment "
        "and every `# tensorcost: dims` pragma parses, and reports the exact column where it does not."
    )
    why_bad = (
        "A shape string jaxtyping cannot parse fails only when the function is first called under a runtime "
        "checker, and never without one: the annotation silently documents nothing. tensorcost cannot cost a "
        "call whose operand shapes it cannot read."
    )
    example = (
        "def scores(q: Float[Tensor, \"batch heads seq *4\"]) -> Float[Tensor, \"batch heads seq seq\"]:\n"
        "    ...\n"
        "# tensorcost: dims seq=8k"
    )
    use_instead = (
        "def scores(q: Float[Tensor, \"batch heads seq d_head\"]) -> Float[Tensor, \"batch heads seq seq\"]:\n"
        "    ...\n"
        "# tensorcost: dims seq=8192"
    )
    references = ("[jaxtyping: array annotations](https://docs.kidger.site/jaxtyping/api/array/)",)
    facts = (Unparseable,)

    def message(self, fact, sizes) -> str:
        if fact.static:
            return f"cannot parse {fact.what}: {fact.detail}"
        return f"{fact.what} cannot be read statically: {fact.detail}"

    valid = (
        Example('from jaxtyping import Float\nfrom torch import Tensor\n\n\n'
                'def project(x: Float[Tensor, "batch seq d_model"], w: Float[Tensor, "d_model d_ff"]):\n'
                '    return x @ w\n'),
        Example("# tensorcost: dims T=1024 B=8\nimport torch\n"),
    )
    invalid = (
        Example('from jaxtyping import Float\nfrom torch import Tensor\n\n\n'
                'def project(x: Float[Tensor, "batch seq *4"], w: Float[Tensor, "d_model d_ff"]):\n'
                '    return x @ w\n'),
        Example("# tensorcost: dims T=1k\nimport torch\n"),
    )


class ShapeContradiction(Rule):
    code = "TCL002"
    name = "shape-contradiction"
    summary = "a shape annotation or shape comment contradicts the shape inferred for the same value"
    severity = "warning"
    what_it_does = (
        "Compares each annotated or commented shape with the shape tensorcost infers from the code that "
        "produced the value (views, transposes, matmuls, einops patterns), and reports a rank or size that "
        "provably differs under the declared dims."
    )
    why_bad = (
        "Shape comments rot: `# (B, nh, T, hs)` stays after a refactor makes the tensor `(B, T, nh, hs)`. The "
        "next reader, and every cost computed from the comment, is then wrong."
    )
    example = (
        "k = k.view(B, T, self.n_head, C // self.n_head)  # (B, nh, T, hs)"
    )
    use_instead = (
        "k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)"
    )
    known_problems = "Dims whose sizes are not declared can only be compared by name, so they are never reported."
    references = ("[einops.rearrange](https://einops.rocks/api/rearrange/)",)
    facts = (Contradiction, EinopsMisfit)

    def message(self, fact, sizes) -> str:
        if isinstance(fact, EinopsMisfit):
            return f"einops pattern {fact.pattern!r} does not fit the input shape: {fact.detail}"
        if fact.declared_dtype is not None:
            return f"{fact.what} declares dtype {fact.declared_dtype} but the value is {fact.inferred_dtype}"
        declared, inferred = shape_text(fact.declared), shape_text(fact.inferred)
        if fact.index is None:
            return (f"{fact.what} declares {declared} (rank {len(fact.declared)}) but the value is {inferred} "
                    f"(rank {len(fact.inferred)})")
        return (f"{fact.what} declares {declared} but the value is {inferred}: dim {fact.index} is "
                f"{sized_dim(fact.declared[fact.index], sizes)} vs {sized_dim(fact.inferred[fact.index], sizes)}")
    valid = (
        Example("import torch\n\n\ndef heads(x, n_head: int):\n    B, T, C = x.size()\n"
                "    k = x.view(B, T, n_head, C // n_head).transpose(1, 2)  # (B, n_head, T, hs)\n    return k\n",
                {"dims": {"B": 8, "T": 1024, "C": 768, "n_head": 12, "hs": 64}}),
    )
    invalid = (
        Example("import torch\n\n\ndef heads(x, n_head: int):\n    B, T, C = x.size()\n"
                "    k = x.view(B, T, n_head, C // n_head)  # (B, n_head, T, hs)\n    return k\n",
                {"dims": {"B": 8, "T": 1024, "C": 768, "n_head": 12, "hs": 64}}),
        Example("import torch\n\n\ndef heads(x):\n    B, T, C = x.size()\n"
                "    y = x.transpose(1, 2)  # (B, T, C, 1)\n    return y\n"),
    )
