"""Inside `with torch.autocast("cuda", dtype=torch.bfloat16):` every torch matmul form runs its
float32 operands in bfloat16. A string-keyed options dict once dropped the autocast dtype of function
calls (`torch.matmul(x, w)` was costed in float32 while `x @ w` was in bfloat16): every torch entry
of the registry is checked here, from its registry test row."""

from __future__ import annotations

import pytest

from tensorcost_lint.analysis.site_registry import SITES
from tests.lint.helpers import lint

from .test_site_registry import DIMS, ROWS

TORCH_SPECS = [spec for spec in SITES if spec.framework in ("torch", "") and "import torch\n" in ROWS[spec.name].source]


def _under_autocast(source: str) -> str:
    *head, last = source.rstrip("\n").splitlines()
    indent = last[: len(last) - len(last.lstrip())]
    return "\n".join([*head, f'{indent}with torch.autocast("cuda", dtype=torch.bfloat16):', f"    {last}"]) + "\n"


def _site(source: str, spec):
    result = lint(source, {"dims": DIMS})
    (site_result,) = [s for s in result.sites if s.site.spec is spec]
    return site_result


def test_every_torch_form_is_covered():
    assert {spec.form for spec in TORCH_SPECS} == {"function", "method", "operator", "module"}
    assert len(TORCH_SPECS) >= 16


@pytest.mark.parametrize("spec", TORCH_SPECS, ids=[spec.name for spec in TORCH_SPECS])
def test_autocast_costs_every_torch_form_in_its_dtype(spec):
    source = ROWS[spec.name].source
    plain, autocast = _site(source, spec), _site(_under_autocast(source), spec)
    assert plain.cost.operand_dtypes and set(plain.cost.operand_dtypes) == {"float32"}
    assert autocast.site.precision.autocast == "bfloat16"
    assert autocast.cost.resolved and set(autocast.cost.operand_dtypes) == {"bfloat16"}
    assert autocast.cost.flops == plain.cost.flops
    assert autocast.cost.traffic_bytes < plain.cost.traffic_bytes  # half the bytes per element


def test_autocast_disabled_or_closed_leaves_float32():
    source = ROWS["torch.matmul"].source.replace(
        "    return torch.matmul(x, w)\n",
        '    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=False):\n        y = torch.matmul(x, w)\n'
        '    with torch.autocast("cuda", dtype=torch.bfloat16):\n        pass\n    return torch.matmul(x, w)\n')
    result = lint(source, {"dims": DIMS})
    assert [s.cost.operand_dtypes for s in result.sites] == [("float32", "float32")] * 2
