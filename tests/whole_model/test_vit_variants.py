"""Semantics einops-style vision transformers need, each as Python or torch defines it (fixtures:
fixtures/styles/vit_variants.py), totals held against FlopCounterMode in both modes:

- `isinstance(dim, tuple)` of a tuple or list the code built decides (a sequence display knows
  which it is), so `cast_tuple(dims, stages)` gives each stage its width;
- `torch.meshgrid` (one tensor per input, each [len(a), len(b), ...]) and an augmented assignment on
  a tensor (`x += table`), which torch runs in place: x keeps its shape and dtype;
- `einops.pack` / `einops.unpack` as einops defines them;
- a literal `-1` in a tuple is the int -1 (`F.pad(x, (1, -1, 0, 0))` crops), read as the inferred
  size only by view/reshape; `(x, *shifted)` splices a list built by `list(map(...))`;
- `Parallel(*[make() for _ in range(n)])`: a starred repeated list binds `*fns` whole (n copies),
  a comprehension over it runs its element once per copy, and the builtin `sum` of tensors adds
  them as Python does (0 + t1 + t2);
- `nn.Unfold` / `F.unfold` (im2col: [N, C*kh*kw, windows]);
- `torch.linspace` (a 1-d tensor of `steps` values), and iterating a tensor yields its rows, so a
  drop-path schedule `[x.item() for x in torch.linspace(0, rate, depth)]` builds one block per rate."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("einops")

from tests.whole_model.fixtures.styles import vit_variants as v  # noqa: E402
from tests.whole_model.model_runs import model_record, record_and_reference  # noqa: E402

CASES = {
    "stage-widths": (v.StagedConvs, "float32 B 3 16 16", (2, 3, 16, 16)),
    "sincos-in-place": (v.SinCosPatches, "float32 B 3 16 16", (2, 3, 16, 16)),
    "register-tokens": (v.RegisterTokens, "float32 B 9 32", (2, 9, 32)),
    "shifted-patches": (v.ShiftedPatches, "float32 B 3 8 8", (2, 3, 8, 8)),
    "parallel-branches": (v.ParallelBranches, "float32 B 5 32", (2, 5, 32)),
    "unfolded-patches": (v.OverlappingPatches, "float32 B 3 8 8", (2, 3, 8, 8)),
    "scheduled-depth": (v.ScheduledDepth, "float32 B 4 16", (2, 4, 16)),
}


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_vit_variant_totals_equal_flop_counter_mode(tmp_path, capsys, case, mode):
    cls, spec, shape = CASES[case]
    record, reference = record_and_reference(tmp_path, capsys, cls(), {"B": 2}, spec, torch.randn(*shape), mode)
    assert record["complete"] is True, (record["not_followed"], record["unresolved_sites"])
    assert record["totals"]["flops"] == reference


def test_a_value_read_as_a_module_list_and_called_is_listed_not_a_silent_zero(tmp_path, capsys):
    # torch's ModuleList has no forward: a call the run reads as calling one cannot be costed
    source = tmp_path / "called_list.py"
    source.write_text("from torch import nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n"
                      "        super().__init__()\n        self.blocks = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 8)])\n\n"
                      "    def forward(self, x):\n        return self.blocks(x)\n")
    record = model_record(tmp_path, capsys, {"B": 2}, f"{source}:Net.forward", {"x": "float32 B 8"})
    assert record["complete"] is False
    assert any("no forward" in item["reason"] for item in record["not_followed"])


def test_a_copy_of_einops_beside_the_model_is_not_read_as_its_source(tmp_path, capsys):
    # einops is modelled by the op table; a copy of its source on the import path (vendored, or a
    # site folder listed in source_roots) is never interpreted in its place
    (tmp_path / "einops").mkdir()
    (tmp_path / "einops" / "__init__.py").write_text(
        "from ._backends import get_backend\n\n\ndef rearrange(tensor, pattern, **lengths):\n"
        "    return get_backend(tensor).rearrange(tensor, pattern, **lengths)\n")
    source = tmp_path / "patches.py"
    source.write_text("from einops import rearrange\nfrom torch import nn\n\n\nclass Net(nn.Module):\n"
                      "    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(48, 8)\n\n"
                      "    def forward(self, x):\n"
                      "        return self.proj(rearrange(x, 'b c (h p) (w q) -> b (h w) (p q c)', p=4, q=4))\n")
    record = model_record(tmp_path, capsys, {"B": 2}, f"{source}:Net.forward", {"x": "float32 B 3 8 8"})
    assert record["complete"] is True
    assert record["totals"]["flops"] == 2 * 2 * 4 * 48 * 8
