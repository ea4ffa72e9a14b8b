"""The libraries `measure` runs workloads with: numpy (default), torch (CPU or CUDA), jax.

Each backend makes synthetic operands of the workload's shapes and dtype (as many copies as asked:
see measure_runs on why each run gets cold operands), returns one call per copy running the
workload's steps, and can evict its caches by writing a buffer larger than them.
"""

from __future__ import annotations

from ..config.errors import ConfigError
from .kernel_libraries import numpy_library, torch_cuda_library, torch_library
from .machine import last_level_cache_bytes
from .optional_imports import require
from .pairwise_contraction import pairwise_call, pairwise_contract
from .workloads import Workload

BACKENDS = ("numpy", "torch", "jax")
CUDA_EVICTION_BYTES = 256 * 2**20  # larger than any current GPU's L2 (H100: 50 MB)
NUMPY_DTYPES = ("float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8")


def single_loop_refusal(workload: Workload, backend: str) -> str | None:
    """numpy's optimize=False einsum runs one loop over every index of 3+ operands; torch and jax
    would contract pairwise instead — another algorithm with other FLOPs, so no comparison."""
    if any(len(step.operands) > 2 for step in workload.steps):
        return (f"the modelled path is one loop over all operands (np.einsum optimize=False); {backend} would "
                "contract pairwise instead: measure it with --backend numpy")
    return None


def describe_steps(workload: Workload, pairwise: str, loop: str) -> str:
    if workload.attention_form is not None:
        return ""
    kinds = [loop if step.single_loop else pairwise for step in workload.steps]
    text = kinds[0] if len(kinds) == 1 else f"{len(kinds)} steps: " + ", ".join(kinds)
    if workload.output_dtype != workload.operand_dtype:
        text += f" + cast to {workload.output_dtype}"
    return text


class NumpyBackend:
    name = "numpy"

    def __init__(self, threads: int | None = None, device: str = "cpu") -> None:
        if device != "cpu":
            raise ConfigError("--device", device, "the numpy backend runs on the CPU only; use --backend torch")
        self.np = require("numpy", "measure", "the numpy backend runs the synthetic operations")
        self.library = numpy_library(self.np, threads)
        self.clock = None
        self._eviction = None

    def unsupported(self, workload: Workload) -> str | None:
        if workload.operand_dtype not in NUMPY_DTYPES:
            return f"numpy has no {workload.operand_dtype} arithmetic; run with --backend torch"
        return None

    def describe(self, workload: Workload) -> str:
        if workload.attention_form is not None:
            return "numpy softmax(QKᵀ)V, scores materialized (numpy has no fused attention)"
        return describe_steps(workload, "np.matmul (BLAS)", "np.einsum(optimize=False) loop")

    def _operand(self, rng, shape, dtype):
        if dtype.startswith(("int", "uint")):
            return rng.integers(-3 if dtype.startswith("int") else 0, 4, size=shape, dtype=dtype)
        values = rng.standard_normal(size=shape, dtype="float64" if dtype == "float64" else "float32")
        return values.astype(dtype, copy=False) if dtype != "float32" else values

    def prepare(self, workload: Workload, copies: int = 1) -> list:
        """One call per copy of the operands (see measure_runs: fresh operands for every run)."""
        rng = self.np.random.default_rng(workload.id)
        first = [self._operand(rng, shape, workload.operand_dtype) for shape in workload.operand_shapes]
        return [self._call(workload, first if n == 0 else [x.copy() for x in first]) for n in range(copies)]

    def _call(self, workload: Workload, operands):
        np, steps, output = self.np, workload.steps, workload.output_dtype
        if workload.attention_form is not None:
            return lambda: numpy_attention(np, *operands, workload.causal)
        cast = output is not None and output != workload.operand_dtype
        if len(steps) == 1 and len(operands) == 2 and not steps[0].single_loop and not cast:
            return pairwise_call(np, steps[0].subscripts, *operands)

        def call():
            live = list(operands)
            for step in steps:
                args = [live[p] for p in step.operands]
                if step.single_loop or len(args) != 2:
                    result = np.einsum(step.subscripts, *args, optimize=False)
                else:
                    result = pairwise_contract(np, step.subscripts, *args)
                live = [x for i, x in enumerate(live) if i not in step.operands] + [result]
            return live[-1].astype(output) if cast else live[-1]
        return call

    @property
    def cache_bytes(self) -> int:
        return last_level_cache_bytes()

    def evict(self) -> None:
        """Write a buffer twice the last-level cache: whatever the previous repeat left is gone."""
        if self._eviction is None:
            self._eviction = self.np.zeros(2 * last_level_cache_bytes() // 8)
        self._eviction += 1.0


def numpy_attention(np, q, k, v, causal: bool):
    """softmax(q kᵀ / √d) v with grouped heads: each key/value head serves h/hk query heads."""
    b, h, sq, d = q.shape
    hk, sk = k.shape[1], k.shape[2]
    q5 = q.reshape(b, hk, h // hk, sq, d)
    scores = np.matmul(q5, k[:, :, None].swapaxes(-1, -2)) * (1.0 / d**0.5)
    if causal:
        scores = np.where(np.tri(sq, sk, sk - sq, dtype=bool), scores, -np.inf)
    scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
    scores /= scores.sum(axis=-1, keepdims=True)
    return np.matmul(scores.astype(v.dtype, copy=False), v[:, :, None]).reshape(b, h, sq, v.shape[3])


def torch_materialized_attention(torch, q, k, v, causal: bool):
    """The unfused form a plan with `form: materialized` describes: scores, softmax, then PV."""
    b, h, sq, d = q.shape
    hk, sk = k.shape[1], k.shape[2]
    q5 = q.reshape(b, hk, h // hk, sq, d)
    scores = torch.matmul(q5, k[:, :, None].transpose(-1, -2)) * (1.0 / d**0.5)
    if causal:
        keep = torch.ones(sq, sk, dtype=torch.bool, device=q.device).tril(sk - sq)
        scores = scores.masked_fill(~keep, float("-inf"))
    probabilities = torch.softmax(scores, dim=-1)
    return torch.matmul(probabilities, v[:, :, None]).reshape(b, h, sq, v.shape[3])


class TorchBackend:
    name = "torch"

    def __init__(self, threads: int | None = None, device: str = "cpu") -> None:
        self.torch = torch = require("torch", "measure", "--backend torch")
        if device == "cpu":
            self.device = torch.device("cpu")
            self.library = torch_library(torch, threads)
            self.clock = None
        else:
            from .machine_calibration import cuda_device
            from .timing import cuda_event_clock

            self.device = cuda_device(torch, device)
            self.library = torch_cuda_library(torch, self.device)
            self.clock = cuda_event_clock(torch, self.device)
        self._eviction = None

    def unsupported(self, workload: Workload) -> str | None:
        if not hasattr(self.torch, workload.operand_dtype or ""):
            return f"torch has no dtype {workload.operand_dtype}"
        if workload.operand_dtype.startswith("float8"):
            return "float8 matmuls need torch._scaled_mm with scales; not modelled by measure"
        return single_loop_refusal(workload, "torch")

    def describe(self, workload: Workload) -> str:
        if workload.attention_form == "fused":
            return "torch scaled_dot_product_attention (fused)" + (", causal" if workload.causal else "")
        if workload.attention_form == "materialized":
            return "torch softmax(QKᵀ)V, scores materialized"
        return describe_steps(workload, "torch.einsum", "torch.einsum")

    def _operand(self, shape, dtype, generator):
        torch = self.torch
        if dtype.startswith(("int", "uint")):
            values = torch.randint(-3 if dtype.startswith("int") else 0, 4, shape, generator=generator)
        else:
            values = torch.randn(shape, generator=generator)
        return values.to(device=self.device, dtype=getattr(torch, dtype))

    def prepare(self, workload: Workload, copies: int = 1) -> list:
        torch = self.torch
        generator = torch.Generator().manual_seed(workload.id)
        first = [self._operand(shape, workload.operand_dtype, generator) for shape in workload.operand_shapes]
        return [self._call(workload, first if n == 0 else [x.clone() for x in first]) for n in range(copies)]

    def _call(self, workload: Workload, operands):
        torch = self.torch
        output = getattr(torch, workload.output_dtype) if workload.output_dtype else None
        if workload.attention_form == "fused":
            from torch.nn.functional import scaled_dot_product_attention as sdpa

            q, k, v = operands
            grouped = {"enable_gqa": True} if q.shape[1] != k.shape[1] else {}
            return lambda: sdpa(q, k, v, is_causal=workload.causal, **grouped)
        if workload.attention_form == "materialized":
            return lambda: torch_materialized_attention(torch, *operands, workload.causal)
        steps = workload.steps
        if len(steps) == 1 and output == operands[0].dtype:
            subscripts = steps[0].subscripts
            return lambda: torch.einsum(subscripts, *operands)

        def call():
            live = list(operands)
            for step in steps:
                result = torch.einsum(step.subscripts, *[live[p] for p in step.operands])
                live = [x for i, x in enumerate(live) if i not in step.operands] + [result]
            return live[-1].to(output) if output is not None else live[-1]
        return call

    @property
    def cache_bytes(self) -> int:
        return CUDA_EVICTION_BYTES if self.device.type == "cuda" else last_level_cache_bytes()

    def evict(self) -> None:
        if self._eviction is None:
            size = CUDA_EVICTION_BYTES if self.device.type == "cuda" else 2 * last_level_cache_bytes()
            self._eviction = self.torch.zeros(size // 4, device=self.device)
        self._eviction.add_(1.0)


class JaxBackend:
    """jax on its default device; each call blocks until the result is ready (jax dispatches
    asynchronously, so a call that returns early would time only the dispatch)."""

    name = "jax"

    def __init__(self, threads: int | None = None, device: str = "cpu") -> None:
        self.jax = require("jax", "measure", "--backend jax")
        import jax.numpy as jnp

        self.jnp = jnp
        platform = self.jax.default_backend()
        from .kernel_libraries import KernelLibrary

        self.library = KernelLibrary("jax", f"jax {self.jax.__version__} on {platform}", None)
        self.clock = None
        self._numpy = NumpyBackend() if platform == "cpu" else None

    def unsupported(self, workload: Workload) -> str | None:
        if not hasattr(self.jnp, workload.operand_dtype or ""):
            return f"jax has no dtype {workload.operand_dtype}"
        return single_loop_refusal(workload, "jax")

    def describe(self, workload: Workload) -> str:
        if workload.attention_form is not None:
            return "jax.nn.dot_product_attention (jit)"
        return describe_steps(workload, "jnp.einsum (jit)", "jnp.einsum (jit)")

    def prepare(self, workload: Workload, copies: int = 1) -> list:
        jax, jnp = self.jax, self.jnp
        keys = jax.random.split(jax.random.PRNGKey(workload.id), max(len(workload.operand_shapes), 1))
        dtype = getattr(jnp, workload.operand_dtype)
        shapes = workload.operand_shapes
        if workload.attention_form is not None:
            shapes = [(s[0], s[2], s[1], s[3]) for s in shapes]  # jax takes [batch, seq, heads, dim]
        first = [jax.random.normal(key, shape).astype(dtype) for key, shape in zip(keys, shapes)]
        if workload.attention_form is not None:
            function = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=workload.causal))
        else:
            steps = workload.steps

            def contract(*arrays):
                live = list(arrays)
                for step in steps:
                    result = jnp.einsum(step.subscripts, *[live[p] for p in step.operands])
                    live = [x for i, x in enumerate(live) if i not in step.operands] + [result]
                return live[-1].astype(getattr(jnp, workload.output_dtype))
            function = jax.jit(contract)
        calls = []
        for n in range(copies):
            operands = first if n == 0 else [jnp.array(x, copy=True) for x in first]
            calls.append(lambda operands=operands: function(*operands).block_until_ready())
        return calls

    @property
    def cache_bytes(self) -> int:
        return last_level_cache_bytes() if self._numpy is not None else CUDA_EVICTION_BYTES

    def evict(self) -> None:
        if self._numpy is not None:
            self._numpy.evict()


def make_backend(name: str, threads: int | None, device: str):
    classes = {"numpy": NumpyBackend, "torch": TorchBackend, "jax": JaxBackend}
    return classes[name](threads, device)
