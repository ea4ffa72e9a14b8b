"""The zoo's decode step (Contract 9 `mode: decode`): one token against a cache of `cache_len`
tokens, as `generate()` runs it on the real transformers model, and the same entry for
`tensorcost model`. The reference: a real prefill of cache_len tokens (`use_cache=True`), then
FlopCounterMode over one step with the returned cache; the cache's bytes after it, one count per
storage."""

from __future__ import annotations

from pathlib import Path

from tests.whole_model import zoo
from tests.whole_model.test_kv_cache import held_storage_bytes

CACHE_LEN = 16


def decode_reference(model_type: str, config, cache_len: int = CACHE_LEN) -> dict:
    """{"flops": FLOPs of one decode step, "kv_cache": the cache's bytes after it}; raises when
    the model keeps no cache (an encoder) or its step does not run."""
    import torch
    import transformers

    from tests.whole_model.model_runs import flop_counter

    torch.manual_seed(0)
    model = getattr(transformers, zoo.model_class_name(model_type))(config).eval()
    with torch.no_grad():
        prefill = model(input_ids=torch.randint(3, 100, (zoo.BATCH, cache_len)), use_cache=True)
        cache = getattr(prefill, "cache", None)
        if cache is None:
            raise ValueError("the model returns no cache")
        with flop_counter() as counter:
            model(input_ids=torch.randint(3, 100, (zoo.BATCH, 1)), cache=cache)
    return {"flops": counter.get_total_flops(), "kv_cache": held_storage_bytes(cache)}


def write_decode_config(folder: Path, model_types: list[str], cache_len: int = CACHE_LEN) -> Path:
    """The zoo's config with one `mode: decode` entry per architecture instead of its two modes."""
    path = zoo.write_zoo_config(folder, model_types)
    lines = [line.replace("--inference:", "--decode:").replace("mode: inference", f"mode: decode, cache_len: {cache_len}")
             for line in path.read_text().splitlines() if "mode: training" not in line]
    path.write_text("\n".join(lines) + "\n")
    return path
