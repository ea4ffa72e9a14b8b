"""`tensorcost model` over the installed x-transformers source tree (unmodified): a decoder
`TransformerWrapper(attn_layers=Decoder(...))`, held against torch's FlopCounterMode on the same
model, inference and training.

x-transformers builds its layers from plain Python values — `('a', 'f') * depth` type strings,
kwargs split by prefix (`groupby_prefix_and_trim`), `default(...)`/`exists(...)` helpers, blocks
picked by `enumerate(zip(*layer_variables))` and `layer_type == 'a'`, module attributes that are
None by default — so the totals hold only when the run follows all of them from the code itself.

The entry is a small class of our own that builds the model, in a temporary folder where
`x_transformers` links to the installed package: the analysis reads the package's files (and
torch_einops_utils' beside them); this test imports x_transformers only to build the reference."""

import importlib.util
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
x_transformers = pytest.importorskip("x_transformers")

from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from tensorcost_lint.cli.main import main  # noqa: E402

SOURCE = Path(importlib.util.find_spec("x_transformers").origin).parent
ENTRY = '''from torch import nn

from x_transformers.x_transformers import Decoder, TransformerWrapper


class DecoderLM(nn.Module):
    def __init__(self, num_tokens, max_seq_len, dim, depth, heads):
        super().__init__()
        self.net = TransformerWrapper(num_tokens=num_tokens, max_seq_len=max_seq_len,
                                      attn_layers=Decoder(dim=dim, depth=depth, heads=heads))

    def forward(self, x):
        return self.net(x)


class RoutedLM(nn.Module):
    """Keyword arguments routed by prefix: `attn_dim_head` to each Attention, `ff_mult` to each
    FeedForward (groupby_prefix_and_trim, then per-layer dicts handed out by `next(iter(...))`)."""

    def __init__(self, num_tokens, max_seq_len, dim, depth, heads):
        super().__init__()
        self.net = TransformerWrapper(num_tokens=num_tokens, max_seq_len=max_seq_len,
                                      attn_layers=Decoder(dim=dim, depth=depth, heads=heads, attn_dim_head=16,
                                                          ff_mult=2))

    def forward(self, x):
        return self.net(x)
'''
ROUTED = {"attn_dim_head": 16, "ff_mult": 2}
# the entry class, the model's constructor arguments, then the input's batch and sequence length
SMALL = {"num_tokens": 256, "max_seq_len": 64, "dim": 64, "depth": 2, "heads": 4, "B": 2, "T": 16}
CASES = {
    "decoder": ("DecoderLM", SMALL),
    "decoder-depth-1": ("DecoderLM",
                        {"num_tokens": 101, "max_seq_len": 32, "dim": 32, "depth": 1, "heads": 2, "B": 3, "T": 8}),
    "decoder-routed-kwargs": ("RoutedLM", SMALL),
}


def _reference(cls: str, dims: dict) -> tuple[int, int]:
    """FlopCounterMode's (inference, training) FLOPs: the forward, then forward and backward."""
    extra = ROUTED if cls == "RoutedLM" else {}
    with torch.device("meta"):
        model = x_transformers.TransformerWrapper(
            num_tokens=dims["num_tokens"], max_seq_len=dims["max_seq_len"],
            attn_layers=x_transformers.Decoder(dim=dims["dim"], depth=dims["depth"], heads=dims["heads"], **extra))
        tokens = torch.zeros(dims["B"], dims["T"], dtype=torch.long)
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(tokens)
    inference = counter.get_total_flops()
    with FlopCounterMode(display=False) as counter:
        model(tokens).sum().backward()
    return inference, counter.get_total_flops()


@pytest.mark.parametrize("case", sorted(CASES))
def test_decoder_totals_equal_flop_counter_mode(tmp_path, capsys, case):
    cls, dims = CASES[case]
    try:
        (tmp_path / "x_transformers").symlink_to(SOURCE, target_is_directory=True)
    except OSError:
        pytest.skip("no symbolic links here: the entry cannot import the installed package")
    (tmp_path / "entry.py").write_text(ENTRY)
    models = "".join(f"  {mode}: {{entry: 'entry.py:{cls}.forward', inputs: {{x: int64 B T}}, mode: {mode}}}\n"
                     for mode in ("inference", "training"))
    (tmp_path / "tensorcost.yaml").write_text(
        f"dims: {json.dumps(dims)}\ncausal_attention_flops: dense\n"
        f"source_roots: ['{SOURCE.as_posix()}', '{(SOURCE.parent / 'torch_einops_utils').as_posix()}']\n"
        f"models:\n{models}")  # the linked package and the one it imports: read by opt-in
    assert main(["model", "--config", str(tmp_path / "tensorcost.yaml"), "--format", "json"]) == 0
    results = {m["name"]: m for m in json.loads(capsys.readouterr().out)["models"]}
    inference, training = _reference(cls, dims)
    assert results["inference"]["totals"]["flops"] == inference
    assert results["inference"]["totals"]["flops_range"] == [inference, inference]
    assert results["training"]["totals"]["flops"] == training
    assert results["training"]["totals"]["forward_flops"] == inference
    for result in results.values():
        assert result["undecided"] == [] and result["unresolved_sites"] == 0 and result["not_followed"] == []
    if case == "decoder-routed-kwargs":
        assert (inference, training) == (5_505_024, 16_515_072)  # README's figure
    if case == "decoder":
        assert (inference, training) == (14_680_064, 44_040_192)  # README's figure
        attention = [s for s in results["inference"]["sites"] if s["expression"].startswith("einsum(")]
        assert [(s["module"], s["executions"]) for s in attention] == [
            ("net.attn_layers.layers.0.1.attend", 1), ("net.attn_layers.layers.0.1.attend", 1),
            ("net.attn_layers.layers.2.1.attend", 1), ("net.attn_layers.layers.2.1.attend", 1)]
