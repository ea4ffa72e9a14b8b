"""The model zoo: `tensorcost model` on transformers causal LMs it was never tuned to, against
FlopCounterMode running the same models in the same run.

    python benchmarks/model_zoo.py [ARCH ...] [--json FILE]

With no ARCH, every architecture of tests/whole_model/zoo_architectures.txt (the team's public
list). Each is built with one tiny configuration (tests/whole_model/zoo.py), its reference counted
on the running model (eager attention; inference under no_grad; training = forward and backward of
`logits.float().sum()`), then one `tensorcost model` run costs every entry, inference and training,
with no `assume` but the attention implementation. Prints one row per architecture and mode —
exact, partial (says so, names where shapes were lost), wrong (complete-looking, different: the
verdict that must stay 0) or failed — then the counts, the most common reasons and the seconds of
the tensorcost run per architecture. Needs torch and transformers (the `test` CI installs both).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tensorcost_lint.config.model_entries import MAX_MODELS  # noqa: E402
from tests.whole_model import zoo  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("architectures", nargs="*", help="model types (default: the whole public list)")
    parser.add_argument("--json", type=Path, help="write every outcome to this file")
    options = parser.parse_args(argv)
    chosen = options.architectures or zoo.architectures()
    team = zoo.team_reference()

    references, build_errors = {}, {}
    for model_type in chosen:
        try:
            references[model_type] = zoo.reference_flops(model_type, zoo.tiny_config(model_type))
        except Exception as error:  # an architecture that does not run here is reported, not fatal
            build_errors[model_type] = f"{type(error).__name__}: {error}"
    built = [m for m in chosen if m in references]
    disagree = [m for m in built if m in team and any(
        zoo.plain_flop_counter_mode(references[m], mode) != team[m].get(f"{mode}_flops") for mode in zoo.MODES)]

    records, codes, stderr, seconds = {}, set(), "", 0.0
    with tempfile.TemporaryDirectory() as folder:
        # a config holds at most MAX_MODELS entries: one run per chunk of architectures
        per_run = MAX_MODELS // len(zoo.MODES)
        for start in range(0, len(built), per_run):
            chunk = Path(folder) / str(start)
            config = zoo.write_zoo_config(chunk, built[start:start + per_run])
            started = time.process_time()
            code, found, err = zoo.run_tensorcost(config)
            seconds += time.process_time() - started
            records.update(found)
            codes.add(code)
            stderr += err
    code = max(codes) if codes else 0

    outcomes = [zoo.classify(m, mode, records.get(f"{m}--{mode}"), references[m][mode])
                for m in built for mode in zoo.MODES]
    print(f"{'architecture':<24} {'mode':<10} {'verdict':<8} {'reference':>14} {'tensorcost':>14}  reason")
    for o in outcomes:
        flops = "-" if o.flops is None else f"{o.flops:,}"
        print(f"{o.model_type:<24} {o.mode:<10} {o.verdict:<8} {o.reference:>14,} {flops:>14}  {o.detail[:90]}")
    counts = Counter(o.verdict for o in outcomes)
    total = len(outcomes)
    print()
    print(f"exact {counts['exact']} / partial {counts['partial']} / wrong {counts['wrong']} / "
          f"failed {counts['failed']}  of {total} totals ({len(built)} architectures x {len(zoo.MODES)} modes)")
    exact_both = sum(all(o.verdict == "exact" for o in outcomes if o.model_type == m) for m in built)
    print(f"exact in both modes: {exact_both} of {len(built)} architectures")
    print(f"tensorcost model: exit {code}, {seconds:.1f} CPU s for {len(built)} architectures in "
          f"{-(-len(built) // (MAX_MODELS // len(zoo.MODES)))} runs "
          f"({seconds / max(len(built), 1):.2f} s each)")
    if build_errors:
        print(f"not built here ({len(build_errors)}): " + ", ".join(sorted(build_errors)))
    if disagree:
        print(f"references differ from the team's figures: {', '.join(disagree)}")
    if stderr.strip():
        print("stderr: " + stderr.strip().splitlines()[-1][:200])
    print("\nmost common reasons (partial and failed):")
    for reason, count in zoo.reason_counts(outcomes):
        print(f"  {count:>4}  {reason}")
    if options.json:
        options.json.write_text(json.dumps([o.__dict__ for o in outcomes], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
