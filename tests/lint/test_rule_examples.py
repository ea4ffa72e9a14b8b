"""Every rule's own VALID and INVALID examples, as one parametrised test (Fixit's pattern): a rule
cannot land without examples that prove it fires and stays quiet. An INVALID example is asserted
whole, as Fixit does: every finding's position and message, and the source after its fix."""

from __future__ import annotations

import pytest

from tensorcost_lint.rules import ALL_RULES

from .helpers import lint, lint_with_baseline, lint_with_models

# `line:col CODE message` of every finding an INVALID example must raise (of the codes it expects)
EXPECTED = {
    "TCL001-invalid-0": (
        '5:41 TCL001 cannot parse shape annotation: a fixed axis cannot bind to multiple axes (`*4` is not allowed)',
    ),
    "TCL001-invalid-1": (
        "1:22 TCL001 cannot parse tensorcost pragma: size of 'T' must be a positive integer, got '1k'",
    ),
    "TCL002-invalid-0": (
        '6:46 TCL002 shape comment declares [B, n_head, T, hs] but the value is [B, T, n_head, C//n_head]: dim 1 is n_head=12 vs T=1024',
    ),
    "TCL002-invalid-1": (
        '6:30 TCL002 shape comment declares [B, T, C, 1] (rank 4) but the value is [B, C, T] (rank 3)',
    ),
    "TCL101-invalid-0": (
        '6:12 TCL101 matmul contraction mismatch: lhs [b, h, s, d] contracts dim d against rhs [b, h, s, d] dim s',
    ),
    "TCL101-invalid-1": (
        '7:12 TCL101 torch.bmm expects 3-D operands, got [4, 16, 32] and [16, 32]',
    ),
    "TCL102-invalid-0": (
        "7:12 TCL102 einsum contract error: index 'd' is bound to d and to s (operand 1, dim 3)",
    ),
    "TCL102-invalid-1": (
        "6:12 TCL102 einsum contract error: operand 0: subscripts 'ijk' name 3 dims but the operand has rank 2",
    ),
    "TCL201-invalid-0": (
        '6:12 TCL201 implicit batch broadcast: [batch, heads, seq, d] x [1, heads, d, seq] broadcasts a size-1 batch dim against a full one ([batch, heads] vs [1, heads]); expand explicitly or fix the batch dims',
    ),
    "TCL201-invalid-1": (
        '6:12 TCL201 implicit batch broadcast: [batch, seq, d_model] x [d_model, d_ff] shares an operand without batch dims across the batch (broadcast_policy: strict)',
    ),
    "TCL301-invalid-0": (
        '6:12 TCL301 narrowing accumulation: bfloat16 operands accumulate in bfloat16 over d summed terms (set by preferred_element_type=jnp.bfloat16); keeps the range but loses precision — accumulate in float32 and cast the result',
    ),
    "TCL301-invalid-1": (
        '9:12 TCL301 narrowing accumulation: float16 operands accumulate in float16 over d summed terms (set by torch.backends.cuda.matmul.allow_fp16_accumulation = True (line 5)); keeps the range but loses precision — accumulate in float32 and cast the result',
    ),
    "TCL302-invalid-0": (
        "6:12 TCL302 incompatible accumulation: bfloat16 operands accumulate in float16 (set by preferred_element_type=jnp.float16), which has 5 exponent bits against the operands' 8: large values overflow — accumulate in float32",
    ),
    "TCL303-invalid-0": (
        '6:12 TCL303 operands have different dtypes: float16 x float32; torch raises a RuntimeError (expected both operands to have the same dtype) — cast them to one dtype explicitly',
    ),
    "TCL401-invalid-0": (
        '6:12 TCL401 quadratic materialization: `q @ k.transpose(-2, -1)` materializes [batch=8, heads=16, seq=8192, seq=8192] float32 = 34.4 GB > budget 256 MiB (268 MB); ×4 when seq doubles; use F.scaled_dot_product_attention (fused, O(seq) memory)',
        '6:12 TCL402 materialized output [batch=8, heads=16, seq=8192, seq=8192] float32 = 34.4 GB exceeds budgets.intermediate_bytes 16 GiB (17.2 GB); compute it in chunks or fuse it with its consumer',
    ),
    "TCL402-invalid-0": (
        '7:12 TCL402 materialized output [batch=32, seq=8192, vocab=128256] float32 = 134 GB exceeds budgets.intermediate_bytes 16 GiB (17.2 GB); compute it in chunks or fuse it with its consumer',
    ),
    "TCL403-invalid-0": (
        '8:12 TCL403 costly contraction order: np.einsum(optimize=False), the default: one loop over every index costs 1.92 GFLOP vs 21.3 MFLOP for the best order [(1, 2), (0, 1)] (×90.2 ≥ contraction_regret 4); pass optimize="optimal"',
    ),
    "TCL403-invalid-1": (
        '8:12 TCL403 costly contraction order: torch.einsum contracts left to right costs 129 MFLOP vs 21.3 MFLOP for the best order [(1, 2), (0, 1)] (×6.1 ≥ contraction_regret 4); reorder the operands, use opt_einsum.contract(..., optimize=[(1, 2), (0, 1)]), or set frameworks.torch_einsum: opt-einsum if opt_einsum is installed',
    ),
    "TCL403-invalid-2": (
        '7:12 TCL403 costly contraction order: `h @ w_down @ w_up @ probe` runs as written, `((h @ w_down) @ w_up) @ probe`, costing 4.33 GFLOP vs 34.6 MFLOP (×125.1 ≥ contraction_regret 4); write `h @ (w_down @ (w_up @ probe))`',
    ),
    "TCL404-invalid-0": (
        '7:12 TCL404 too large to cost exactly: `np.einsum("ij,jk,kl,lm->im", a, b, c, d, optimize="optimal")` as executed needs 6*n^3 FLOP with n=4194304, ≈ 4.4e20 FLOP, which exceeds 2**63−1 (≈ 9.22e18): no numbers are reported for this site',
    ),
    "TCL404-invalid-1": (
        '7:12 TCL404 too large to cost exactly: `a @ b` as executed needs 2147483648 FLOP per run × execution.count 9223372036854775807, ≈ 2.0e28 FLOP, which exceeds 2**63−1 (≈ 9.22e18): no numbers are reported for this site',
    ),
    "TCL501-invalid-0": (
        '6:12 TCL501 cost: 8.19 kFLOP (2*b*h*s^2*d), output [b=1, h=2, s=16, d=8] float32 1.02 kB, traffic 4.1 kB across hbm-to-compute, intensity 2 FLOP/B, lower bound 1.223 ns on h100-sxm (TRAFFIC-bound)',
    ),
    "TCL502-invalid-0": (
        '6:12 TCL502 roofline lower bound 65.64 ms on h100-sxm exceeds budgets.latency_seconds 1 ms (COMPUTE-bound: 4.4 TFLOP at 67 TFLOP/s float32); no kernel can beat this bound — reduce the work, the precision or the traffic',
    ),
    "TCL503-invalid-0": (
        "10:5 TCL503 whole-model budget: model `mlp` (inference) is over models.mlp.budgets: total FLOPs 77.3 GFLOP > budgets.flops 20 GFLOP; reduce the model's cost or raise the budget",
    ),
    "TCL503-invalid-1": (
        "10:5 TCL503 whole-model budget: model `mlp` (inference) is over models.mlp.budgets: lower bound 1.154 ms > budgets.latency_seconds 10 µs; reduce the model's cost or raise the budget",
    ),
    "TCL504-invalid-0": (
        "10:5 TCL504 model memory over device memory: model `mlp` (training) needs 172 GB at its peak, during optimizer (parameters 34.4 GB, gradients 34.4 GB, optimizer states 68.7 GB, activations 5.37 GB) > h100-sxm memory_bytes 80 GB; use a smaller model or batch, mixed precision, or a device with more memory",
    ),
    "TCL602-invalid-0": (
        "10:5 TCL602 model cost regression: model `mlp` grew past budgets.regression 0%: FLOPs 77.3 GFLOP → 155 GFLOP (×2.0), forward FLOPs 77.3 GFLOP → 155 GFLOP (×2.0), traffic 271 MB → 522 MB (×1.93), peak retained bytes 126 MB → 252 MB (×2.0), lower bound 1.154 ms → 2.308 ms (×2.0); reduce the cost, or accept it with `tensorcost baseline`",
        "11:16 TCL601 cost regression: model.py::MLP.forward `self.down(self.up(x).relu())` in model `mlp` at down grew past budgets.regression 0%: FLOPs 38.7 GFLOP → 77.3 GFLOP (×2.0), output bytes 25.2 MB → 50.3 MB (×2.0), traffic 135 MB → 261 MB (×1.93), lower bound 576.9 µs → 1.154 ms (×2.0); reduce the cost, or accept it with `tensorcost baseline`",
        "11:26 TCL601 cost regression: model.py::MLP.forward `self.up(x)` in model `mlp` at up grew past budgets.regression 0%: FLOPs 38.7 GFLOP → 77.3 GFLOP (×2.0), output bytes 101 MB → 201 MB (×2.0), traffic 135 MB → 261 MB (×1.93), lower bound 576.9 µs → 1.154 ms (×2.0); reduce the cost, or accept it with `tensorcost baseline`",
    ),
    "TCL601-invalid-0": (
        "6:12 TCL601 cost regression: model.py::mix `x @ w` grew past budgets.regression 0%: FLOPs 38.7 GFLOP → 77.3 GFLOP (×2.0), output bytes 101 MB → 201 MB (×2.0), traffic 135 MB → 245 MB (×1.81), lower bound 576.9 µs → 1.154 ms (×2.0); reduce the cost, or accept it with `tensorcost baseline`",
    ),
    "TCL601-invalid-1": (
        "6:12 TCL601 cost regression: model.py::mix `x @ w` grew past budgets.regression 0%: output bytes 50.3 MB → 101 MB (×2.0), traffic 67.6 MB → 135 MB (×2.0), lower bound 39.07 µs → 576.9 µs (×14.77); reduce the cost, or accept it with `tensorcost baseline`",
    ),
}
# the source after applying every fix of an INVALID example's findings
FIXED = {
    "TCL403-invalid-0": ('import numpy as np\n\n\ndef chain(a, b, c):\n    a = np.zeros((1000, 1000))\n'
                         '    b = np.zeros((1000, 64))\n    c = np.zeros((64, 10))\n'
                         '    return np.einsum("ij,jk,kl->il", a, b, c, optimize="optimal")\n'),
    "TCL403-invalid-2": ('from jaxtyping import Float\nfrom torch import Tensor\n\n\n'
                         'def project(h: Float[Tensor, "tokens d"], w_down: Float[Tensor, "d r"], w_up: Float[Tensor, "r d"],\n'
                         '            probe: Float[Tensor, "d"]):\n    return h @ (w_down @ (w_up @ probe))\n'),
}


def apply_fixes(source: str, findings) -> str:
    """Apply each fix (1-based, end exclusive) from the last to the first, as an editor would."""
    lines = source.splitlines(keepends=True)
    for fix in sorted((f.fix for f in findings if f.fix), key=lambda x: (x.line, x.column), reverse=True):
        start = sum(len(line) for line in lines[: fix.line - 1]) + fix.column - 1
        end = sum(len(line) for line in lines[: fix.end_line - 1]) + fix.end_column - 1
        text = "".join(lines)
        lines = (text[:start] + fix.replacement + text[end:]).splitlines(keepends=True)
    return "".join(lines)

CASES = [
    pytest.param(rule, kind, index, example, id=f"{rule.code}-{kind}-{index}")
    for rule in ALL_RULES
    for kind, examples in (("valid", rule.valid), ("invalid", rule.invalid))
    for index, example in enumerate(examples)
]


@pytest.mark.parametrize("rule,kind,index,example", CASES)
def test_rule_example(rule, kind, index, example):
    if "models" in example.config:  # whole-model rules: the model file and its config on disk
        findings = lint_with_models(example.source, example.config, example.baseline, example.baseline_config).findings
    elif example.baseline is not None:  # a rule comparing two runs: checked with `check --baseline`
        findings = lint_with_baseline(example.source, example.config, example.baseline, example.baseline_config)[0].findings
    else:
        findings = lint(example.source, example.config).findings
    if kind == "valid":
        assert rule.code not in [f.code for f in findings]
        return
    name = f"{rule.code}-invalid-{index}"
    codes = example.expect or (rule.code,)
    raised = [f for f in findings if f.code in codes]
    assert [f"{f.line}:{f.column} {f.code} {f.message}" for f in raised] == list(EXPECTED[name])
    assert {f.code for f in raised} == set(codes)
    fixed = apply_fixes(example.source, raised)
    assert fixed == FIXED.get(name, example.source)
    if name in FIXED:  # the fix removes what it fixes
        assert rule.code not in [f.code for f in lint(fixed, example.config).findings]


def test_every_invalid_example_has_its_expected_findings():
    assert sorted(EXPECTED) == sorted(f"{rule.code}-invalid-{i}" for rule in ALL_RULES for i in range(len(rule.invalid)))


def test_every_rule_but_the_ledger_and_internal_error_has_both_kinds_of_example():
    for rule in ALL_RULES:
        if rule.code in ("TCL900",):
            continue
        assert rule.invalid, rule.code
        if rule.code != "TCL501":
            assert rule.valid, rule.code


def test_every_rule_page_has_the_four_headings():
    from tensorcost_lint.rules.docs import rule_page

    for rule in ALL_RULES:
        page = rule_page(rule.code)
        for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
            assert heading in page, (rule.code, heading)
        assert rule.name and rule.name == rule.name.lower() and " " not in rule.name
