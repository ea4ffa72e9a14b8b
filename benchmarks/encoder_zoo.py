"""Vision and encoder models of transformers, built as users build them (`XModel(config)`, its
config.json as `dims_from`), `tensorcost model` against FlopCounterMode running the same models in
the same run. None of these is in the causal-LM zoo (benchmarks/model_zoo.py); nothing in the
analysis names their code.

    python benchmarks/encoder_zoo.py [NAME ...]

One row per model and mode: exact, partial (and where a shape was lost or a call not followed),
wrong (complete-looking and different: must stay 0) or failed. Training is the forward and the
backward of every tensor the model returns, summed (pooled outputs included), as `tensorcost`
costs the backward of what the returned value depends on. Eager attention on both sides (a
runtime choice, the one `assume`). Needs torch and transformers.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tensorcost_lint.cli.main import main as tensorcost  # noqa: E402

BATCH, SEQ = 2, 16
_SMALL = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
_IMAGE = dict(image_size=32, patch_size=8, num_channels=3)
_STAGES = dict(hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1])
_PIXELS = ("pixel_values", "float32 batch 3 32 32")
_TOKENS = ("input_ids", "int64 batch seq")
# name: (model class, config class, config fields, (input name, tensorcost spec))
MODELS = {
    "vit": ("ViTModel", "ViTConfig", {**_SMALL, **_IMAGE}, _PIXELS),
    "deit": ("DeiTModel", "DeiTConfig", {**_SMALL, **_IMAGE}, _PIXELS),
    "clip_vision": ("CLIPVisionModel", "CLIPVisionConfig", {**_SMALL, **_IMAGE}, _PIXELS),
    "convnext": ("ConvNextModel", "ConvNextConfig", {**_STAGES, "num_channels": 3}, _PIXELS),
    "resnet": ("ResNetModel", "ResNetConfig", {**_STAGES, "embedding_size": 8}, _PIXELS),
    "swin": ("SwinModel", "SwinConfig", dict(image_size=32, patch_size=4, embed_dim=16, depths=[1, 1],
                                            num_heads=[2, 4], window_size=4), _PIXELS),
    "bert": ("BertModel", "BertConfig", {**_SMALL, "vocab_size": 128, "max_position_embeddings": 64}, _TOKENS),
    "roberta": ("RobertaModel", "RobertaConfig", {**_SMALL, "vocab_size": 128, "max_position_embeddings": 64},
                _TOKENS),
    "distilbert": ("DistilBertModel", "DistilBertConfig", dict(dim=32, n_layers=2, n_heads=4, hidden_dim=64,
                                                               vocab_size=128, max_position_embeddings=64), _TOKENS),
    "t5_encoder": ("T5EncoderModel", "T5Config", dict(d_model=32, d_ff=64, num_layers=2, num_heads=4, d_kv=8,
                                                      vocab_size=128), _TOKENS),
}


def _reference(model, name: str, spec: str) -> dict:
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    torch.manual_seed(0)
    if spec.startswith("int64"):
        value = torch.randint(3, 128, (BATCH, SEQ))
    else:
        value = torch.randn(BATCH, 3, 32, 32)
    counts = {}
    for mode in ("inference", "training"):
        model.train(mode == "training")
        with FlopCounterMode(display=False) as counter:
            if mode == "training":
                out = model(**{name: value})
                sum(t.float().sum() for t in out.values() if torch.is_tensor(t)).backward()
            else:
                with torch.no_grad():
                    model(**{name: value})
        counts[mode] = counter.get_total_flops()
    return counts


def _records(folder: Path, name: str, model_class: str, argument: str, spec: str) -> tuple[int, dict, str]:
    entries = "".join(
        f"  {name}--{mode}:\n    build: \"transformers.{model_class}(config)\"\n    dims_from: config.json\n"
        f"    inputs: {{{argument}: \"{spec}\"}}\n    mode: {mode}\n"
        f"    assume: {{\"self.config._attn_implementation\": eager}}\n" for mode in ("inference", "training"))
    (folder / "tensorcost.yaml").write_text(f"dims: {{batch: {BATCH}, seq: {SEQ}}}\nsite_packages: auto\n"
                                            f"models:\n{entries}")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = tensorcost(["model", "--config", str(folder / "tensorcost.yaml"), "--format", "json"])
    if code != 0:
        return code, {}, err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else ""
    return code, {r["name"].split("--")[1]: r for r in json.loads(out.getvalue())["models"]}, ""


def _where(record: dict) -> str:
    for site in record.get("sites", []):
        lost = site.get("shape_lost_at")
        if lost:
            return f"{Path(lost['path']).name}:{lost['line']} {lost['expression']}: {lost['reason']}"
    for cut in record.get("not_followed", []):
        return f"{Path(cut['path']).name}:{cut['line']} {cut['expression']}: {cut['reason']}"
    return "; ".join(record.get("undecided", [])) or "-"


def main(argv: list[str] | None = None) -> int:
    import transformers

    chosen = (argv if argv is not None else sys.argv[1:]) or list(MODELS)
    verdicts = {"exact": 0, "partial": 0, "wrong": 0, "failed": 0}
    print(f"{'model':<12} {'mode':<9} {'verdict':<8} {'FlopCounterMode':>15} {'tensorcost':>12}  where")
    for name in chosen:
        model_class, config_class, fields, (argument, spec) = MODELS[name]
        config = getattr(transformers, config_class)(attn_implementation="eager", **fields)
        reference = _reference(getattr(transformers, model_class)(config), argument, spec)
        with tempfile.TemporaryDirectory() as directory:
            folder = Path(directory)
            config.to_json_file(str(folder / "config.json"))
            code, records, error = _records(folder, name, model_class, argument, spec)
        for mode in ("inference", "training"):
            record = records.get(mode)
            if record is None:
                verdict, flops, where = "failed", None, error or f"exit {code}"
            else:
                flops = record["totals"]["flops"]
                verdict = ("exact" if flops == reference[mode] else "wrong") if record["complete"] else "partial"
                where = "-" if record["complete"] else _where(record)
            verdicts[verdict] += 1
            shown = "-" if flops is None else f"{flops:,}"
            print(f"{name:<12} {mode:<9} {verdict:<8} {reference[mode]:>15,} {shown:>12}  {where[:150]}")
    print("\n" + " / ".join(f"{kind} {count}" for kind, count in verdicts.items()) + f"  of {2 * len(chosen)} totals")
    return 1 if verdicts["wrong"] else 0


if __name__ == "__main__":
    sys.exit(main())
