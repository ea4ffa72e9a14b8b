"""Generated programs through the whole pass (`lint_source`): nothing escapes, no TCL900 and no E999
on valid Python, every site keeps the report's invariants, and each file finishes in bounded time.

Two generators: hypothesmith's random valid Python (the parser and the walk over odd syntax), and
our model-like programs (tests/robustness/model_programs.py), which reach propagation, costing and
the rules. benchmarks/fuzz_lint.py runs the same checks for as long as one wants.
"""

from __future__ import annotations

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .lint_checks import fuzz_config, lint_problem, python_accepts

# hypothesmith compiles what it writes; `1()` is valid Python that warns, which is not our concern.
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")
from .model_programs import model_programs

# Sized for the suite's ~90 s budget on 2 cores: generation of these programs dominates (~10/s).
MODEL_LIKE = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
RANDOM_PYTHON = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


@RANDOM_PYTHON
@given(st.one_of(hypothesmith.from_grammar(), hypothesmith.from_node()))
def test_random_valid_python_never_breaks_the_pass(source):
    # prefilter=False: hypothesmith's programs rarely hold a candidate call, and the point is the parse.
    problem = lint_problem(source, prefilter=False)
    assert problem is None, f"{problem}\n--- program ---\n{source}"


@MODEL_LIKE
@given(model_programs())
def test_model_like_programs_never_break_the_pass(source):
    assert python_accepts(source), source  # the generator's own promise
    problem = lint_problem(source)
    assert problem is None, f"{problem}\n--- program ---\n{source}"


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(model_programs(), st.sampled_from(("strict", "shared-weights")), st.sampled_from(("left-to-right", "opt-einsum")),
       st.sampled_from(("float16", "bfloat16", "float32", "int8")))
def test_model_like_programs_under_other_policies(source, broadcast, torch_einsum, dtype):
    config = fuzz_config(broadcast_policy=broadcast, torch_einsum=torch_einsum, default_dtype=dtype)
    problem = lint_problem(source, config)
    assert problem is None, f"{problem}\n--- program ---\n{source}"


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(model_programs(), st.dictionaries(st.sampled_from(("batch", "seq", "d_model", "T", "n")),
                                         st.sampled_from((1, 2**31, 2**62, 2**63 - 1)), max_size=3))
def test_model_like_programs_with_huge_cli_dims(source, cli_dims):
    """`--dim` sizes up to 2**63-1 (the flag's own bound): products overflow, which must show as
    unresolved sites or refusals, never as an internal error or a count past 2**63-1."""
    problem = lint_problem(source, fuzz_config(cli_dims=cli_dims))
    assert problem is None, f"{problem}\n--- program ---\n{source}"


NEGATIVE_COMMENT_SIZE = '''import torch
from torch import Tensor
from jaxtyping import Float


def f(a: Float[Tensor, "batch seq"], h):
    y = h.foo()  # (batch, -1)
    return a @ y
'''


def test_a_negative_size_in_a_shape_comment_never_becomes_a_dim():
    # Found by the model-like fuzzer. The annotation parser refuses `"batch -1"` (negative size);
    # parse_shape_comment returns Const(-1), and the site is reported as `rhs [batch, -1]`.
    assert lint_problem(NEGATIVE_COMMENT_SIZE) is None


NP_DOT_OF_A_SCALAR = '''import numpy as np
from jaxtyping import Float


def f(x: Float[np.ndarray, ""], w: Float[np.ndarray, "a b c"]):
    return np.dot(x, w), np.dot(w, x)
'''


def test_np_dot_with_a_0d_operand_is_not_an_internal_error():
    # Found by the model-like fuzzer. model_dot indexes left[-1] / right[-2] without checking for
    # a 0-D operand; np.dot with a scalar is elementwise multiplication (no contraction).
    assert lint_problem(NP_DOT_OF_A_SCALAR) is None
