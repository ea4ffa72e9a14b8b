"""Library-style model code (our fixture written the way transformers writes models: a config
class with an attribute_map and class defaults, registries, output records, `**kwargs`, Conv1D
through `torch.addmm`, `range(len(self.h))`, `super().forward`) against FlopCounterMode, inference
and training. Runs without transformers installed."""

import json

import pytest

torch = pytest.importorskip("torch")

from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from tensorcost_lint.cli.main import main  # noqa: E402
from tests.whole_model.fixtures.hfstyle.configuration_tiny import TinyConfig  # noqa: E402
from tests.whole_model.fixtures.hfstyle.modeling_tiny import TinyForCausalLM  # noqa: E402

FIXTURE = "tests/whole_model/fixtures/hfstyle/modeling_tiny.py"
BATCH, STEPS = 2, 8


def _reference(config: TinyConfig) -> tuple[int, int]:
    model = TinyForCausalLM(config)
    ids = torch.zeros(BATCH, STEPS, dtype=torch.long)
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(input_ids=ids)
    inference = counter.get_total_flops()
    with FlopCounterMode(display=False) as counter:
        model(input_ids=ids)["logits"].sum().backward()
    return inference, counter.get_total_flops()


def _run(tmp_path, capsys, config: TinyConfig, *more: str) -> dict:
    (tmp_path / "config.json").write_text(config.to_json())
    (tmp_path / "tensorcost.yaml").write_text(f"dims: {{B: {BATCH}, T: {STEPS}}}\ncausal_attention_flops: dense\n")
    entry = f"{(tmp_path.cwd() / FIXTURE).as_posix()}:TinyForCausalLM.forward"
    argv = ["model", "--config", str(tmp_path / "tensorcost.yaml"), "--entry", entry, "--input",
            "input_ids=int64 B T", "--dims-from", str(tmp_path / "config.json"), "--format", "json", *more]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)["models"][0]


@pytest.mark.parametrize(("act", "extra_proj", "head_transform"),
                         [("gelu", False, False), ("relu2", True, False), ("gelu", False, True)])
def test_library_style_model_equals_flop_counter_mode(tmp_path, capsys, act, extra_proj, head_transform):
    """`extra_proj` is an `__init__` default config.json leaves out when false: read, not undecided;
    `head_transform` calls `gelu`, a module built at the top of the helpers' file by a registry
    function (`gelu = get_activation("gelu")`) and imported by name."""
    config = TinyConfig(n_embd=16, n_layer=3, n_head=2, vocab_size=37, hidden_act=act, extra_proj=extra_proj,
                        head_transform=head_transform)
    inference, training = _reference(config)
    result = _run(tmp_path, capsys, config)
    assert result["totals"]["flops"] == inference
    assert result["unresolved_sites"] == 0 and result["undecided"] == [] and result["not_followed"] == []
    sites = {(s["module"], s["expression"]): s for s in result["sites"]}
    addmm = sites[("model.h.attn.c_attn", "torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)")]
    assert addmm["executions"] == 3 and addmm["flops"] == 3 * 2 * BATCH * STEPS * 16 * 48
    scores = sites[("model.h.attn", "torch.matmul(query, key.transpose(-1, -2))")]
    assert scores["path"].endswith("hfstyle/modeling_tiny.py") and scores["executions"] == 3
    rotary = sites[("model.rotary", "inv @ positions")]  # under @torch.no_grad(): no backward
    assert rotary["executions"] == 1 and rotary["flops"] == 2 * 8 * STEPS
    assert (("extra", "self.extra(hidden_states)") in sites) == extra_proj
    assert (("transform", "self.transform(hidden_states)") in sites) == head_transform
    trained = _run(tmp_path, capsys, config, "--mode", "training")
    assert {(s["module"], s["expression"]): s for s in trained["sites"]}[("model.rotary", "inv @ positions")][
        "flops"] == 2 * 8 * STEPS
    assert trained["totals"]["flops"] == training
    assert trained["totals"]["forward_flops"] == inference


def test_a_registered_key_picks_the_registered_function(tmp_path, capsys):
    """`assume` names the registry key: `sdpa` is the fused attention the registry holds, costed
    with FlopCounterMode's formula for the fused kernel in place of the eager matmuls."""
    from torch.utils.flop_counter import sdpa_flop_count

    config = TinyConfig(n_embd=16, n_layer=2, n_head=2, vocab_size=37)
    eager, _ = _reference(config)
    result = _run(tmp_path, capsys, config, "--assume", "self.config._attn_implementation=sdpa")
    shape = (BATCH, 2, STEPS, 8)
    manual = 2 * (2 * BATCH * 2 * STEPS * STEPS * 8)
    assert result["totals"]["flops"] == eager + 2 * (sdpa_flop_count(shape, shape, shape) - manual)
    expressions = {s["expression"]: s for s in result["sites"]}
    assert "torch.matmul(query, key.transpose(-1, -2))" not in expressions
    fused = expressions["nn.functional.scaled_dot_product_attention(query, key, value)"]
    assert fused["module"] == "model.h.attn" and fused["executions"] == 2
