"""TCL001 and TCL002: the shape contracts users write (annotations, shape comments, pragmas)."""

from __future__ import annotations

from .base import Example, Rule


class _DiagnosticRule(Rule):
    def check(self, context):
        for diagnostic in context.diagnostics:
            if diagnostic.code == self.code:
                yield self.finding(context, diagnostic.line, diagnostic.column, diagnostic.message)


class ShapeParseError(_DiagnosticRule):
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


class ShapeContradiction(_DiagnosticRule):
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
