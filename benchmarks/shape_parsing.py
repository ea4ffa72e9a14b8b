"""Micro-benchmark: parses per second of the shape grammars, against a baseline in the same run.

The baseline is CPython's own parser (`ast.parse`, C code) reading the same shape written as a
Python tuple expression: a floor for "how fast can one parse this much text in-process". If
einops is installed, its ParsedExpression is measured on the einops patterns too.

    .venv/bin/python benchmarks/shape_parsing.py [--seconds 0.2]
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from shape_annotations import (  # noqa: E402
    AName,
    AString,
    ASubscript,
    interpret_annotation,
    parse_einops_pattern,
    parse_pragma,
    parse_shape_comment,
    parse_shape_string,
)

SHAPES = ["batch seq d_model", "*batch heads q k", "#b 1 d_model//n_heads pos-1 2*d", "rows=4 cols=3 ... _"]
COMMENTS = ["# (B, nh, T, hs)", "# [batch, pos, head_index, d_head]", "# (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)"]
PATTERNS = ["b (h d) -> b h d", "b h q d, b h k d -> b h q k", "b ... (h w) c -> b ... h w c"]
ANNOTATIONS = [ASubscript(AName("jaxtyping.Float"), (AName("torch.Tensor"), AString(s, 0))) for s in SHAPES]


def as_python_tuple(shape: str) -> str:
    tokens = [t.lstrip("#*?").replace("...", "rest").split("=")[-1] or "x" for t in shape.split()]
    return "(" + ", ".join(tokens) + ",)"


def comment_tuple(comment: str) -> str:
    return comment.split("->")[-1].lstrip("# ").replace("[", "(").replace("]", ")")


def einops_tuple(pattern: str) -> str:
    left = pattern.split("->")[0]
    left = left.replace(",", " ").replace("...", "rest").replace("(", "[ ").replace(")", " ]")
    return "(" + ", ".join(left.split()).replace("[,", "[").replace(", ]", "]") + ",)"


def rate(fn: Callable[[str], object], inputs: list, seconds: float) -> float:
    """Parses per second, each input parsed in turn, for about `seconds`."""
    count, start = 0, time.perf_counter()
    while True:
        for item in inputs:
            fn(item)
        count += len(inputs)
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return count / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.2, help="time per measurement")
    seconds = parser.parse_args().seconds

    rows: list[tuple[str, float, str, float]] = [
        ("jaxtyping shape strings", rate(parse_shape_string, SHAPES, seconds),
         "ast.parse (same dims as a tuple)", rate(ast.parse, [as_python_tuple(s) for s in SHAPES], seconds)),
        ("annotation trees (Float[Tensor, ...])", rate(lambda n: interpret_annotation(n, {}), ANNOTATIONS, seconds),
         "ast.parse (same dims as a tuple)", rate(ast.parse, [as_python_tuple(s) for s in SHAPES], seconds)),
        ("shape comments", rate(parse_shape_comment, COMMENTS, seconds),
         "ast.parse (the target tuple)", rate(ast.parse, [comment_tuple(c) for c in COMMENTS], seconds)),
        ("einops patterns", rate(parse_einops_pattern, PATTERNS, seconds),
         "ast.parse (left side as a tuple)", rate(ast.parse, [einops_tuple(p) for p in PATTERNS], seconds)),
        ("pragmas", rate(parse_pragma, ["# tensorcost: dims T=1024 B=8 d_model=768"], seconds),
         "ast.parse (T=1024; B=8; ...)", rate(ast.parse, ["T=1024; B=8; d_model=768"], seconds)),
    ]
    try:
        from einops.parsing import ParsedExpression  # optional: einops' own parser, pure Python too

        sides = [side for p in PATTERNS for side in p.replace(",", " ").split("->")]
        rows.append(("einops pattern sides", rate(lambda s: parse_einops_pattern(s + "->"), sides, seconds),
                     "einops ParsedExpression", rate(ParsedExpression, sides, seconds)))
    except ImportError:
        pass

    width = max(len(r[0]) for r in rows)
    base_width = max(len(r[2]) for r in rows)
    print(f"{'grammar':<{width}}  {'ours/s':>10}  {'baseline':<{base_width}}  {'base/s':>10}  ratio")
    for name, ours, base_name, base in rows:
        print(f"{name:<{width}}  {ours:>10,.0f}  {base_name:<{base_width}}  {base:>10,.0f}  {ours / base:5.2f}")


if __name__ == "__main__":
    main()
