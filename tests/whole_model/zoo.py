"""The model zoo's protocol, shared by `benchmarks/model_zoo.py` (all architectures) and the CI test
(a fixed sample): transformers causal LMs built with one tiny configuration, FlopCounterMode's counts
of the running model as the reference, and one `tensorcost model` run over every entry.

The reference side imports torch and transformers (it runs the model); the tensorcost side reads the
installed source (transformers and the packages it imports) as text, with no `assume` but the kernels the reference ran (eager
attention; grouped-matmul experts)."""

from __future__ import annotations

import contextlib
import inspect
import io
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ARCHITECTURES = HERE / "zoo_architectures.txt"   # copied from the team's shared zoo list
REFERENCE = HERE / "zoo_reference.json"          # the team's measured figures, to cross-check ours
BATCH, SEQ = 2, 32
MODES = ("inference", "training")

# keyword -> value; a config class gets those its __init__ names or its attribute_map maps
_TINY = {
    **dict.fromkeys(("hidden_size", "n_embd", "d_model", "dim", "embed_dim"), 64),
    **dict.fromkeys(("intermediate_size", "ffn_dim", "n_inner", "d_ff", "ffn_hidden_size"), 128),
    **dict.fromkeys(("num_attention_heads", "n_head", "n_heads", "num_heads", "encoder_attention_heads",
                     "decoder_attention_heads"), 4),
    "num_key_value_heads": 2, "head_dim": 16,
    **dict.fromkeys(("num_hidden_layers", "n_layer", "n_layers", "num_layers", "encoder_layers",
                     "decoder_layers"), 2),
    "vocab_size": 512,
    **dict.fromkeys(("max_position_embeddings", "n_positions"), 128),
    **dict.fromkeys(("num_experts", "num_local_experts", "n_routed_experts"), 4),
    "num_experts_per_tok": 2, "moe_intermediate_size": 32, "shared_expert_intermediate_size": 64,
    "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "decoder_start_token_id": 0,
}


def architectures() -> list[str]:
    return [line.strip() for line in ARCHITECTURES.read_text().splitlines() if line.strip()]


def team_reference() -> dict:
    return json.loads(REFERENCE.read_text())["models"]


def tiny_config(model_type: str):
    """The architecture's config class called with the tiny keywords it accepts, eager attention."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    config_class = CONFIG_MAPPING[model_type]
    accepted = set(inspect.signature(config_class.__init__).parameters) | set(config_class.attribute_map)
    config = config_class(**{key: value for key, value in _TINY.items() if key in accepted})
    config._attn_implementation = "eager"
    return config


def model_class_name(model_type: str) -> str:
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    return MODEL_FOR_CAUSAL_LM_MAPPING_NAMES[model_type]


def reference_flops(model_type: str, config) -> dict[str, int]:
    """FlopCounterMode's totals of the running model (with model_runs.flop_counter's formula for the
    grouped matmul of mixture-of-experts layers, which FlopCounterMode alone counts as 0): inference
    under no_grad, training = forward and backward of `logits.float().sum()`."""
    import torch
    import transformers

    from tests.whole_model.model_runs import flop_counter

    torch.manual_seed(0)
    model = getattr(transformers, model_class_name(model_type))(config)
    ids = torch.randint(3, 100, (BATCH, SEQ))
    model.eval()
    with torch.no_grad(), flop_counter() as inference:
        model(input_ids=ids)
    model.train()
    with flop_counter() as training:
        model(input_ids=ids).logits.float().sum().backward()
    grouped = torch.ops.aten._grouped_mm
    return {"inference": inference.get_total_flops(), "training": training.get_total_flops(),
            # what the formula added: FlopCounterMode alone (the team's figures) counts the rest
            "grouped_mm": {"inference": inference.get_flop_counts()["Global"].get(grouped, 0),
                           "training": training.get_flop_counts()["Global"].get(grouped, 0)}}


def plain_flop_counter_mode(reference: dict, mode: str) -> int:
    """The reference as FlopCounterMode alone counts it (no grouped-matmul formula): the team's protocol."""
    return reference[mode] - reference["grouped_mm"][mode]


def model_source(model_type: str) -> Path:
    """The installed source file of the architecture's model class (found, not imported)."""
    import transformers

    module = inspect.getmodule(getattr(transformers, model_class_name(model_type)))
    return Path(inspect.getfile(module))


# The kernels the reference ran, chosen at run time by the environment, not by the program: eager
# attention (set on the config), and for mixture-of-experts layers the grouped-matmul experts
# (transformers' default where torch has `grouped_mm`) run by torch's kernel: `_can_use_grouped_mm`
# checks the device and torch's version, `hasattr(torch.nn.functional, "grouped_mm")` the version
# (torch 2.13 has it). Nothing else is assumed.
_RUNTIME_CHOICES = ("'self.config._attn_implementation': eager, 'self.config._experts_implementation': grouped_mm, "
                    "'_can_use_grouped_mm(input, weight, offs)': true, "
                    "'hasattr(torch.nn.functional, \"grouped_mm\")': true")


def write_zoo_config(folder: Path, model_types: list[str], modes: tuple[str, ...] = MODES,
                     optimizer: str | None = None) -> Path:
    """config.json per architecture and one tensorcost.yaml with an entry per architecture and mode
    (`modes`, with `optimizer:` on each entry when given); the only assumption is the attention
    implementation the reference ran."""
    entries = []
    for model_type in model_types:
        config = tiny_config(model_type)
        config_folder = folder / model_type
        config_folder.mkdir(parents=True, exist_ok=True)
        config.to_json_file(str(config_folder / "config.json"))
        entry = f"{model_source(model_type).as_posix()}:{model_class_name(model_type)}.forward"
        chosen = f"optimizer: {optimizer}, " if optimizer is not None else ""
        for mode in modes:
            entries.append(
                f"  {model_type}--{mode}: {{entry: '{entry}', inputs: {{input_ids: int64 batch seq}}, "
                f"dims_from: {model_type}/config.json, mode: {mode}, {chosen}"
                f"assume: {{{_RUNTIME_CHOICES}}}}}\n")
    path = folder / "tensorcost.yaml"
    path.write_text(f"dims: {{batch: {BATCH}, seq: {SEQ}}}\ncausal_attention_flops: dense\n"
                    # Contract 7a: the active environment's installed source, read as text (transformers and
                    # what it imports: packaging's version comparisons, huggingface_hub's helpers)
                    "site_packages: auto\n"
                    f"models:\n{''.join(entries)}")
    return path


def run_tensorcost(config_path: Path) -> tuple[int, dict[str, dict], str]:
    """One in-process `tensorcost model --format json` over every entry: (exit code, records by
    entry name, stderr)."""
    from tensorcost_lint.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["model", "--config", str(config_path), "--format", "json"])
    records = {}
    if out.getvalue().strip():
        records = {record["name"]: record for record in json.loads(out.getvalue())["models"]}
    return code, records, err.getvalue()


@dataclass(frozen=True)
class Outcome:
    model_type: str
    mode: str
    verdict: str          # exact | partial | wrong | failed
    reference: int
    flops: int | None
    detail: str           # why it is partial or failed: the first reason the record gives


def classify(model_type: str, mode: str, record: dict | None, reference: int) -> Outcome:
    """exact: complete and equal; partial: says it is partial; wrong: complete-looking and
    different (the worst case: a user would trust it); failed: no total at all."""
    if record is None or record.get("totals") is None:
        reason = (record or {}).get("error") or "no record"
        return Outcome(model_type, mode, "failed", reference, None, str(reason))
    flops = record["totals"]["flops"]
    partial = bool(record.get("unresolved_sites")) or bool(record.get("not_followed")) \
        or record.get("complete") is False
    if flops == reference and not partial:
        return Outcome(model_type, mode, "exact", reference, flops, "")
    if partial:
        return Outcome(model_type, mode, "partial", reference, flops, first_reason(record))
    return Outcome(model_type, mode, "wrong", reference, flops, "complete-looking total differs")


def first_reason(record: dict) -> str:
    for site in record.get("sites", []):
        if not site.get("resolved"):
            lost = site.get("shape_lost_at")
            if lost:
                return f"{lost.get('reason')} (at {lost.get('expression')})"
            return str(site.get("reason"))
    for item in record.get("not_followed", []):
        return f"not followed: {item if isinstance(item, str) else item.get('reason', item)}"
    return "partial"


def reason_counts(outcomes: list[Outcome], top: int = 10) -> list[tuple[str, int]]:
    return Counter(o.detail[:160] for o in outcomes if o.verdict in ("partial", "failed")).most_common(top)
