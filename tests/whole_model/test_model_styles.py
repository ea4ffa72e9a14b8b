"""Whole models written in other real styles (our own fixtures in tests/whole_model/fixtures/styles:
vit-pytorch, x-transformers, timm, Hugging Face helpers, older Hugging Face cache loops, plain
functional code) against torch's FlopCounterMode run on the same classes: inference and training
totals are equal, nothing is left unresolved or not followed.

On CPU, `F.scaled_dot_product_attention` runs a fused flash kernel FlopCounterMode has no formula
for (it counts 0); the reference registers torch's own fused-SDPA formulas (`sdpa_flop_count`,
`sdpa_backward_flop_count`, what FlopCounterMode counts for the GPU kernels) for it."""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("einops")
from torch.utils.flop_counter import FlopCounterMode, sdpa_backward_flop_count, sdpa_flop_count  # noqa: E402

from tensorcost_lint.cli.main import main  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

STYLES = Path(__file__).resolve().parent / "fixtures" / "styles"


@dataclass(frozen=True)
class Case:
    module: str  # fixture module under fixtures/styles
    cls: str
    dims: dict  # constructor arguments read as dims, plus input dims
    inputs: dict  # entry parameter -> spec
    make_inputs: object  # dims -> dict of torch inputs
    assume: dict = field(default_factory=dict)  # --assume for tensorcost and constructor keywords for torch
    constructor: dict = field(default_factory=dict)  # keywords the torch model gets for `assume`


def _tokens(dims):
    return {"x": torch.randint(0, dims["num_tokens"], (dims["B"], dims["T"]))}


def _images(dims):
    return {"x": torch.randn(dims["B"], 3, dims["img_size"], dims["img_size"])}


def _ids(dims):
    return {"input_ids": torch.randint(0, dims["vocab_size"], (dims["B"], dims["T"]))}


LEGACY = {"vocab_size": 101, "dim": 32, "heads": 4, "depth": 2, "max_len": 32, "B": 2, "T": 16}
TIMM = {"img_size": 16, "patch_size": 4, "num_classes": 10, "embed_dim": 32, "depth": 2, "num_heads": 2, "B": 2}
CASES = {
    "vit-pytorch": Case("vit_einops", "ViT",
                        {"image_size": 16, "patch_size": 4, "num_classes": 10, "dim": 32, "depth": 2, "heads": 2,
                         "mlp_dim": 64, "B": 2},
                        {"img": "float32 B 3 image_size image_size"},
                        lambda d: {"img": torch.randn(d["B"], 3, d["image_size"], d["image_size"])}),
    "x-transformers": Case("xtf_style", "TransformerLM",
                           {"num_tokens": 101, "max_seq_len": 32, "dim": 32, "depth": 2, "heads": 4, "B": 2, "T": 16},
                           {"x": "int64 B T"}, _tokens),
    "x-transformers-glu": Case("xtf_style", "TransformerLM",
                               {"num_tokens": 101, "max_seq_len": 32, "dim": 32, "depth": 2, "heads": 4, "B": 2,
                                "T": 16},
                               {"x": "int64 B T"}, _tokens, {"glu": "true"}, {"ff_glu": True}),
    "timm": Case("timm_vit", "VisionTransformer", TIMM, {"x": "float32 B 3 img_size img_size"}, _images),
    "timm-conv-stem": Case("timm_vit", "VisionTransformer", TIMM, {"x": "float32 B 3 img_size img_size"}, _images,
                           {"conv_stem": "true"}, {"conv_stem": True}),
    "hf-helpers": Case("hf_helpers", "CausalLM",
                       {"vocab_size": 101, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
                        "num_key_value_heads": 2, "intermediate_size": 48, "B": 2, "T": 16},
                       {"input_ids": "int64 B T"},
                       lambda d: {"input_ids": torch.randint(0, d["vocab_size"], (d["B"], d["T"]))}),
    "legacy-cache-loop": Case("legacy_cache_loop", "CachedLM", LEGACY, {"input_ids": "int64 B T"}, _ids),
    "zip-per-layer-values": Case("legacy_cache_loop", "PrunedLM", LEGACY, {"input_ids": "int64 B T"}, _ids),
    "zip-shortest-range": Case("legacy_cache_loop", "EarlyExitLM", {**LEGACY, "depth": 3, "exit_after": 2},
                               {"input_ids": "int64 B T"}, _ids),
    "annotated-parameters": Case("annotated_params", "AnnotatedLM", {"d_vocab": 101, "d_model": 32, "d_mlp": 64,
                                                                      "B": 2, "T": 16},
                                 {"tokens": "int64 B T"},
                                 lambda d: {"tokens": torch.randint(0, d["d_vocab"], (d["B"], d["T"]))},
                                 constructor={"upcast": "float32"}),
    "functional": Case("functional", "FunctionalGPT",
                       {"vocab_size": 101, "block_size": 32, "n_layer": 2, "n_head": 4, "n_embd": 32, "B": 2, "T": 16},
                       {"idx": "int64 B T"},
                       lambda d: {"idx": torch.randint(0, d["vocab_size"], (d["B"], d["T"]))}),
}


_ATEN = torch.ops.aten
FUSED_SDPA_ON_CPU = {
    _ATEN._scaled_dot_product_flash_attention_for_cpu:
        lambda query, key, value, *args, out_shape=None, **kwargs: sdpa_flop_count(query, key, value),
    _ATEN._scaled_dot_product_flash_attention_for_cpu_backward:
        lambda grad, query, key, value, *args, out_shape=None, **kwargs: sdpa_backward_flop_count(
            grad, query, key, value),
}


def _constructor_dims(case: Case) -> dict:
    module = importlib.import_module(f"tests.whole_model.fixtures.styles.{case.module}")
    import inspect

    parameters = inspect.signature(getattr(module, case.cls)).parameters
    return {name: value for name, value in case.dims.items() if name in parameters}


def _reference(case: Case, training: bool) -> int:
    module = importlib.import_module(f"tests.whole_model.fixtures.styles.{case.module}")
    torch.manual_seed(0)
    model = getattr(module, case.cls)(**_constructor_dims(case), **case.constructor)
    inputs = case.make_inputs(case.dims)
    if training:
        model.train()
        with FlopCounterMode(display=False, custom_mapping=FUSED_SDPA_ON_CPU) as counter:
            model(**inputs).float().sum().backward()
    else:
        model.eval()  # no torch.no_grad(): its views of parameters trip FlopCounterMode's module tracker
        with FlopCounterMode(display=False, custom_mapping=FUSED_SDPA_ON_CPU) as counter:
            model(**inputs)
    return counter.get_total_flops()


def _analyse(case: Case, mode: str, tmp_path, capsys) -> dict:
    return model_record(tmp_path, capsys, case.dims, f"{STYLES / (case.module + '.py')}:{case.cls}.forward",
                        case.inputs, mode, [f"{condition}={value}" for condition, value in case.assume.items()],
                        "causal_attention_flops: dense\n")


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("style", sorted(CASES))
def test_style_totals_equal_flop_counter_mode(style, mode, tmp_path, capsys):
    case = CASES[style]
    result = _analyse(case, mode, tmp_path, capsys)
    expected = _reference(case, mode == "training")
    totals = result["totals"]
    assert (totals["flops"], totals["flops_range"]) == (expected, [expected, expected])
    assert result["unresolved_sites"] == 0
    assert result["not_followed"] == []


TL_STYLE = Path(__file__).resolve().parent / "fixtures" / "tl_style"
TL_DIMS = {"d_model": 32, "d_head": 8, "n_heads": 4, "d_mlp": 128, "d_vocab": 101, "n_ctx": 32, "n_layers": 2,
           "batch": 2, "pos": 16}


def _tl_reference(monkeypatch, training: bool) -> int:
    monkeypatch.syspath_prepend(str(TL_STYLE))
    from tl_pkg.config import Config
    from tl_pkg.model import HookedModel

    model = HookedModel(Config(**{k: v for k, v in TL_DIMS.items() if k not in ("batch", "pos")}))
    for parameter in model.parameters():
        torch.nn.init.normal_(parameter)
    tokens = torch.randint(0, TL_DIMS["d_vocab"], (TL_DIMS["batch"], TL_DIMS["pos"]))
    return counted_flops(model, tokens, training=training)


def _tl_run(tmp_path, capsys, mode: str, assume: list[str]) -> dict:
    return model_record(tmp_path, capsys, TL_DIMS, f"{TL_STYLE / 'tl_pkg' / 'model.py'}:HookedModel.forward",
                        {"input": "int64 batch pos"}, mode, assume)


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_transformer_lens_style_package(tmp_path, capsys, monkeypatch, mode):
    """A package in TransformerLens' layout: absolute imports of itself, components re-exported by
    a package __init__, a ModuleList subclass, `list(zip(range(n), self.blocks))[start:stop]` with
    defaults None and 0, a token lookup `W_E[tokens, :]`, a config string named by `assume`."""
    result = _tl_run(tmp_path, capsys, mode, ["self.cfg.normalization_type=LN"])
    expected = _tl_reference(monkeypatch, mode == "training")
    assert (result["totals"]["flops"], result["totals"]["flops_range"]) == (expected, [expected, expected])
    assert result["unresolved_sites"] == 0 and result["not_followed"] == [] and result["undecided"] == []
    assert {site["module"] for site in result["sites"]} == {"blocks.attn", "blocks.mlp", "unembed"}


def test_a_config_string_not_assumed_costs_each_norm(tmp_path, capsys):
    """`normalization_layer` is LayerNorm, LayerNormPre or `lambda cfg: nn.Identity()` by an
    undecided string: each is called (the lambda too, a function like any), the condition is listed,
    and the parameters, which depend on the class, are unknown with the reason."""
    result = _tl_run(tmp_path, capsys, "inference", [])
    assert result["not_followed"] == [] and result["unresolved_sites"] == 0
    assert [u["condition"] if isinstance(u, dict) else u for u in result["undecided"]] == \
        ['self.cfg.normalization_type == "LN"']
    memory = result["totals"]["memory"]
    assert memory["parameters"] is None and "blocks.ln1: the module class is undecided" in memory["unknown"]["parameters"]


def test_annotated_parameters_give_shapes_the_caller_could_not(tmp_path, capsys):
    dims = {"batch": 2, "head": 3, "pos": 5, "d_head": 4}
    config = tmp_path / "tensorcost.yaml"
    config.write_text(f"dims: {json.dumps(dims)}\n")
    argv = ["model", "--config", str(config), "--entry", f"{STYLES / 'annotated_helpers.py'}:PaddedScores.forward",
            "--input", "x=float32 batch head pos d_head", "--format", "json"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)["models"][0]
    x = torch.zeros(2, 3, 5, 4, device="meta")
    with FlopCounterMode(display=False) as counter:
        torch.nn.functional.pad(x, (0, 0)) @ x.transpose(-1, -2)
    assert [(s["expression"], s["flops"]) for s in result["sites"]] == [
        ("q @ k.transpose(-1, -2)", counter.get_total_flops())]
