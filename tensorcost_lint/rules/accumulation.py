"""TCL301, TCL302, TCL303: accumulation dtypes and operand dtypes of contractions."""

from __future__ import annotations

from estimator import Accumulation, classify_accumulation, normalize_dtype, safe_accumulator

from ..costing.site_costs import operand_dtypes
from .base import Example, Rule


def _k_text(result) -> str:
    shapes = result.site.shapes
    if shapes is None:
        return ""
    summed = [label for label in dict.fromkeys("".join(shapes.inputs)) if label not in shapes.output]
    if not summed:
        return ""
    from shape_annotations import render_dim

    return " over " + " x ".join(render_dim(shapes.dims[label]) for label in summed) + " summed terms"


class _AccumulationRule(Rule):
    verdict: Accumulation

    def check_site(self, result, context):
        site = result.site
        if site.precision.accumulation_dtype is None or any(type(op).__name__ != "TensorFact" for op in site.operands):
            return
        dtypes = set(operand_dtypes(site, context.settings.default_dtype))
        if len(dtypes) != 1:
            return
        operand = normalize_dtype(dtypes.pop())
        accumulation = normalize_dtype(site.precision.accumulation_dtype)
        if classify_accumulation(operand, accumulation) is not self.verdict:
            return
        yield self.at_site(context, result, self.message(operand, accumulation, site, result))


class NarrowingAccumulation(_AccumulationRule):
    code = "TCL301"
    name = "narrowing-accumulation"
    summary = "accumulation dtype keeps the operands' range but is below their safe accumulation"
    severity = "warning"
    verdict = Accumulation.NARROWING
    what_it_does = (
        "Reads the accumulation dtype a contraction is asked to use — `preferred_element_type=` (JAX), "
        "`out_dtype=` (torch), numpy's `dtype=`, and opt-in flags such as "
        "`torch.backends.cuda.matmul.allow_fp16_accumulation = True` — and flags one below the safe accumulator "
        "for the operand dtype (fp16/bf16/fp8 → fp32, fp32 → fp32, int8 → int32)."
    )
    why_bad = (
        "fp16 has 10 mantissa bits: summing thousands of products in fp16 loses the small terms (round-off grows "
        "with K), so long contractions drift silently. The range is kept, so nothing overflows to warn you."
    )
    example = 'jnp.einsum("btd,df->btf", x, w, preferred_element_type=jnp.bfloat16)  # bf16 operands'
    use_instead = 'jnp.einsum("btd,df->btf", x, w, preferred_element_type=jnp.float32).astype(jnp.bfloat16)'
    valid = (
        Example('import jax.numpy as jnp\nfrom jaxtyping import BFloat16, Array\n\n\n'
                'def mlp(x: BFloat16[Array, "b t d"], w: BFloat16[Array, "d f"]):\n'
                '    return jnp.einsum("btd,df->btf", x, w, preferred_element_type=jnp.float32)\n',
                {"dims": {"b": 8, "t": 2048, "d": 4096, "f": 14336}}),
    )
    invalid = (
        Example('import jax.numpy as jnp\nfrom jaxtyping import BFloat16, Array\n\n\n'
                'def mlp(x: BFloat16[Array, "b t d"], w: BFloat16[Array, "d f"]):\n'
                '    return jnp.einsum("btd,df->btf", x, w, preferred_element_type=jnp.bfloat16)\n',
                {"dims": {"b": 8, "t": 2048, "d": 4096, "f": 14336}}),
        Example('import torch\nfrom jaxtyping import Float16\nfrom torch import Tensor\n\n'
                'torch.backends.cuda.matmul.allow_fp16_accumulation = True\n\n\n'
                'def project(x: Float16[Tensor, "n d"], w: Float16[Tensor, "d f"]):\n'
                '    return x @ w\n'),
    )

    def message(self, operand, accumulation, site, result) -> str:
        return (f"narrowing accumulation: {operand.name} operands accumulate in {accumulation.name}"
                f"{_k_text(result)} (set by {site.precision.accumulation_source}); keeps the range but loses precision — "
                f"accumulate in {safe_accumulator(operand).name} and cast the result")


class IncompatibleAccumulation(_AccumulationRule):
    code = "TCL302"
    name = "incompatible-accumulation"
    summary = "accumulation dtype has less exponent range than the operands (bf16 operands into fp16)"
    severity = "error"
    verdict = Accumulation.INCOMPATIBLE
    what_it_does = (
        "Flags a contraction asked to accumulate in a dtype with less exponent range than its operands (bf16 "
        "has 8 exponent bits, fp16 only 5), or in another number domain (floats into ints)."
    )
    why_bad = "Values bf16 represents overflow to inf in fp16 (anything above 65504): the result is not just imprecise, it is wrong."
    example = 'jnp.dot(x, w, preferred_element_type=jnp.float16)  # bf16 operands'
    use_instead = 'jnp.dot(x, w, preferred_element_type=jnp.float32)'
    valid = NarrowingAccumulation.valid
    invalid = (
        Example('import jax.numpy as jnp\nfrom jaxtyping import BFloat16, Array\n\n\n'
                'def mlp(x: BFloat16[Array, "b t d"], w: BFloat16[Array, "d f"]):\n'
                '    return jnp.einsum("btd,df->btf", x, w, preferred_element_type=jnp.float16)\n',
                {"dims": {"b": 8, "t": 2048, "d": 4096, "f": 14336}}),
    )

    def message(self, operand, accumulation, site, result) -> str:
        return (f"incompatible accumulation: {operand.name} operands accumulate in {accumulation.name} "
                f"(set by {site.precision.accumulation_source}), which has {accumulation.exponent_bits} exponent bits against "
                f"the operands' {operand.exponent_bits}: large values overflow — accumulate in "
                f"{safe_accumulator(operand).name}")


class MixedOperandDtypes(Rule):
    code = "TCL303"
    name = "mixed-operand-dtypes"
    summary = "operands of one contraction have different dtypes (implicit promotion or runtime error)"
    severity = "warning"
    what_it_does = "Flags a matmul, einsum or attention call whose operands have different dtypes."
    why_bad = (
        "torch.matmul raises `expected both operands to have the same dtype`; numpy and jax promote silently to "
        "the wider dtype, doubling traffic and leaving the tensor cores' fast path."
    )
    example = "y = x.half() @ w  # w is float32"
    use_instead = "y = x.half() @ w.half()  # or keep both in float32"
    valid = (
        Example('from jaxtyping import Float16\nfrom torch import Tensor\n\n\n'
                'def project(x: Float16[Tensor, "n d"], w: Float16[Tensor, "d f"]):\n    return x @ w\n'),
    )
    invalid = (
        Example('from jaxtyping import Float16, Float32\nfrom torch import Tensor\n\n\n'
                'def project(x: Float16[Tensor, "n d"], w: Float32[Tensor, "d f"]):\n    return x @ w\n'),
    )

    def check_site(self, result, context):
        site = result.site
        if any(type(op).__name__ != "TensorFact" for op in site.operands):
            return
        dtypes = operand_dtypes(site, context.settings.default_dtype)
        if len(set(dtypes)) < 2:
            return
        consequence = {
            "torch": "torch raises a RuntimeError (expected both operands to have the same dtype)",
            "numpy": "numpy promotes silently to the widest dtype",
            "jax": "jax promotes silently to the widest dtype",
        }.get(site.framework, "the framework promotes or raises")
        yield self.at_site(context, result, (
            f"operands have different dtypes: {' x '.join(dtypes)}; {consequence} — cast them to one dtype explicitly"))
