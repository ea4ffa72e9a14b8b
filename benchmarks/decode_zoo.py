"""The model zoo's decode step: `tensorcost model` in `mode: decode` (one token against a cache of
16 tokens) on the transformers causal LMs of the zoo, against FlopCounterMode of the same step on
the running model after a real prefill, and its cache's bytes.

    python benchmarks/decode_zoo.py [ARCH ...] [--json FILE]

Rows: exact (complete, FLOPs and kv_cache equal), partial (says so), wrong (complete-looking and
different in FLOPs or kv_cache: must stay 0), failed (no total), or no cache (the model keeps none:
not counted). Needs torch and transformers."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.whole_model import zoo, zoo_decode  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("architectures", nargs="*", help="model types (default: the whole public list)")
    parser.add_argument("--json", type=Path, help="write every outcome to this file")
    options = parser.parse_args(argv)
    references, no_cache = {}, []
    for model_type in options.architectures or zoo.architectures():
        try:
            references[model_type] = zoo_decode.decode_reference(model_type, zoo.tiny_config(model_type))
        except Exception:  # noqa: BLE001 - an encoder, or a step that does not run here: not a decode row
            no_cache.append(model_type)
    built = list(references)
    records, errors = {}, {}
    with tempfile.TemporaryDirectory() as folder:
        # one run per architecture: a decode entry the run cannot step is a one-line error (exit 2)
        # that would stop the others
        for model_type in built:
            config = zoo_decode.write_decode_config(Path(folder) / model_type, [model_type])
            code, found, err = zoo.run_tensorcost(config)
            records.update(found)
            if code == 2:
                errors[model_type] = err.strip().splitlines()[-1] if err.strip() else "exit 2"
    rows = []
    for model_type in built:
        reference, record = references[model_type], records.get(f"{model_type}--decode")
        outcome = zoo.classify(model_type, "decode", record if model_type not in errors else
                               {"error": errors[model_type].rpartition(": ")[2]}, reference["flops"])
        kv = None if record is None or record.get("totals") is None else record["totals"]["memory"]["kv_cache"]
        verdict = outcome.verdict
        if verdict == "exact" and kv != reference["kv_cache"]:
            verdict = "wrong" if kv is not None else "partial"
        rows.append({"model_type": model_type, "verdict": verdict, "flops": outcome.flops,
                     "reference_flops": reference["flops"], "kv_cache": kv, "reference_kv_cache": reference["kv_cache"],
                     "detail": outcome.detail})
    print(f"{'architecture':<24} {'verdict':<8} {'reference':>12} {'tensorcost':>12} {'kv ref':>9} {'kv':>9}  reason")
    for row in rows:
        flops = "-" if row["flops"] is None else f"{row['flops']:,}"
        kv = "-" if row["kv_cache"] is None else f"{row['kv_cache']:,}"
        print(f"{row['model_type']:<24} {row['verdict']:<8} {row['reference_flops']:>12,} {flops:>12} "
              f"{row['reference_kv_cache']:>9,} {kv:>9}  {row['detail'][:80]}")
    counts = Counter(row["verdict"] for row in rows)
    print(f"\nexact {counts['exact']} / partial {counts['partial']} / wrong {counts['wrong']} / failed "
          f"{counts['failed']} of {len(rows)} decode steps; no cache kept or no decode run: {len(no_cache)}")
    if options.json:
        options.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
