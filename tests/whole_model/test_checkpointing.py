"""Activation checkpointing: the wrapped call saves only its inputs and its forward runs again in
the backward. References: autograd's saved storages (see test_retained_bytes) and FlopCounterMode
over a reentrant checkpoint (torch's default), whose recompute it counts."""

import importlib.util

import pytest

torch = pytest.importorskip("torch")

from torch.utils.flop_counter import FlopCounterMode, sdpa_backward_flop_count, sdpa_flop_count  # noqa: E402

from tests.whole_model.model_runs import model_record  # noqa: E402
from tests.whole_model.fixtures.tinyllama.model import LlamaConfig, TinyLlama  # noqa: E402
from tests.whole_model.test_retained_bytes import LLAMA, LLAMA_DIMS, _llama, saved_storage_bytes  # noqa: E402

HF4_STYLE = '''
import torch
import torch.nn as nn


class Layer(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.up = nn.Linear(width, 4 * width)
        self.down = nn.Linear(4 * width, width)

    def forward(self, x):
        return x + self.down(torch.relu(self.up(x)))


class Stack(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        self.inp = nn.Linear(width, width)
        self.layers = nn.ModuleList([Layer(width) for _ in range(depth)])
        self.head = nn.Linear(width, width)
        self.gradient_checkpointing = False

    def forward(self, x):
        x = self.inp(x)
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                x = self._gradient_checkpointing_func(layer.__call__, x)
            else:
                x = layer(x)
        return self.head(x)
'''

HF5_STYLE = HF4_STYLE.replace('''class Layer(nn.Module):''', '''class GradientCheckpointingLayer(nn.Module):
    """transformers 5.x wraps a subclass's forward in checkpoint when enabled (outside the model code)."""

    gradient_checkpointing = False

    def __call__(self, *args, **kwargs):
        if self.gradient_checkpointing and self.training:
            return torch.utils.checkpoint.checkpoint(super().__call__, *args, use_reentrant=True, **kwargs)
        return super().__call__(*args, **kwargs)


class Layer(GradientCheckpointingLayer):''').replace('''            if self.gradient_checkpointing and self.training:
                x = self._gradient_checkpointing_func(layer.__call__, x)
            else:
                x = layer(x)''', '''            x = layer(x)''')
DIMS = {"width": 8, "depth": 3, "B": 2, "T": 4}


def _load(path):
    spec = importlib.util.spec_from_file_location("checkpointed_stack", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _analyse(tmp_path, capsys, entry, inputs, dims, assume) -> dict:
    return model_record(tmp_path, capsys, dims, entry, dict(item.split("=", 1) for item in inputs), "training",
                        [f"{key}={value}" for key, value in assume.items()], "causal_attention_flops: dense\n")


@pytest.mark.parametrize("source", [HF4_STYLE, HF5_STYLE], ids=["gradient-checkpointing-func", "checkpointing-layer"])
def test_hf_checkpointing_enabled_through_assume(tmp_path, capsys, source):
    path = tmp_path / "stack.py"
    path.write_text(source)
    module = _load(path)
    torch.manual_seed(0)
    x = torch.randn(DIMS["B"], DIMS["T"], DIMS["width"])
    expected = {}
    for enabled in (False, True):
        model = module.Stack(DIMS["width"], DIMS["depth"])
        model.gradient_checkpointing = enabled  # what `gradient_checkpointing_enable()` sets
        model._gradient_checkpointing_func = lambda fn, *a: torch.utils.checkpoint.checkpoint(
            fn, *a, use_reentrant=True)
        for layer in model.layers:
            layer.gradient_checkpointing = enabled
        with FlopCounterMode(display=False) as counter:
            out = model(x)
            kept = saved_storage_bytes(out, model)
            out.sum().backward()
        expected[enabled] = (counter.get_total_flops(), kept)
    entry = f"{path.as_posix()}:Stack.forward"
    plain = _analyse(tmp_path, capsys, entry, ["x=float32 B T width"], DIMS, {})
    enabled = _analyse(tmp_path, capsys, entry, ["x=float32 B T width"], DIMS, {"self.gradient_checkpointing": "true"})
    assert (plain["totals"]["flops"], plain["totals"]["peak_retained_bytes"]) == expected[False]
    assert (enabled["totals"]["flops"], enabled["totals"]["peak_retained_bytes"]) == expected[True]
    # the recompute is one more forward of every layer: (4 + 4) * B*T*width*4*width FLOPs each
    rows = DIMS["B"] * DIMS["T"]
    assert expected[True][0] - expected[False][0] == DIMS["depth"] * 2 * 2 * rows * DIMS["width"] * 4 * DIMS["width"]
    # kept: each layer's input, and what `inp` and `head` save (their inputs), B*T*width float32 each
    assert expected[True][1] == (DIMS["depth"] + 2) * rows * DIMS["width"] * 4


def _meta_flops(checkpointing: bool) -> int:
    """FlopCounterMode on the meta device (attention takes the math path there), with each fused
    attention's backward replaced by the formula FlopCounterMode registers for the fused kernels."""
    d = LLAMA_DIMS
    with torch.device("meta"):
        model = TinyLlama(LlamaConfig(vocab_size=d["vocab_size"], hidden_size=d["hidden_size"],
                                      intermediate_size=d["intermediate_size"],
                                      num_hidden_layers=d["num_hidden_layers"],
                                      num_attention_heads=d["num_attention_heads"],
                                      num_key_value_heads=d["num_key_value_heads"]))
        ids = torch.zeros(d["B"], d["T"], dtype=torch.long)
    model.gradient_checkpointing = checkpointing
    with torch.device("meta"), FlopCounterMode(display=False) as counter:
        _, loss = model(ids, ids)
        loss.backward()
    shape = (d["B"], d["num_attention_heads"], d["T"], d["hidden_size"] // d["num_attention_heads"])
    math_backward = 2 * sdpa_flop_count(shape, shape, shape)  # two bmm, each twice in the backward
    return counter.get_total_flops() + d["num_hidden_layers"] * (
        sdpa_backward_flop_count(shape, shape, shape, shape) - math_backward)


def test_llama_checkpointed_layers_flops_include_the_recompute_and_keep_only_inputs(tmp_path, capsys):
    entry = f"{(tmp_path.cwd() / LLAMA).as_posix()}:TinyLlama.forward"
    inputs = ["input_ids=int64 B T", "labels=int64 B T"]
    plain = _analyse(tmp_path, capsys, entry, inputs, LLAMA_DIMS, {})
    enabled = _analyse(tmp_path, capsys, entry, inputs, LLAMA_DIMS, {"self.gradient_checkpointing": "true"})
    assert plain["totals"]["flops"] == _meta_flops(False)
    assert enabled["totals"]["flops"] == _meta_flops(True)
    assert enabled["totals"]["forward_flops"] == plain["totals"]["forward_flops"]
    model, inputs = _llama(checkpointing=True)
    _, loss = model(*inputs)
    assert enabled["totals"]["peak_retained_bytes"] == saved_storage_bytes(loss, model)
    assert enabled["totals"]["peak_retained_bytes"] < plain["totals"]["peak_retained_bytes"]
