"""Depth does not cost analysis time: `tensorcost model` on one architecture's tiny config at 2 and
at 80 layers (issue 21: the same time within ±20%), inference and training, each run a fresh process
with no cache, CPU time of the child. A layer loop is one summary multiplied by its trip count, so
80 layers cost what 2 do; an analysis that walked every layer would take about 40× as long.

    python benchmarks/depth_scaling.py [ARCH ...] [--layers 2,80] [--repeats 3]

Default architecture: llama. Prints one row per architecture, mode and depth (median CPU s of the
repeats, the total FLOPs the run reports), and the deep/shallow ratio. Needs transformers.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.whole_model import zoo  # noqa: E402

LAYER_KEYS = ("num_hidden_layers", "n_layer", "n_layers", "num_layers")


def write_config(folder: Path, model_type: str, layers: int) -> Path:
    config = zoo.tiny_config(model_type)
    for key in LAYER_KEYS:
        if hasattr(config, key):
            setattr(config, key, layers)
            break
    if getattr(config, "layer_types", None) is not None:  # one type per layer, as the model reads them
        config.layer_types = [config.layer_types[i % len(config.layer_types)] for i in range(layers)]
    config_folder = folder / f"{model_type}-{layers}"
    config_folder.mkdir(parents=True, exist_ok=True)
    config.to_json_file(str(config_folder / "config.json"))
    entry = f"{zoo.model_source(model_type).as_posix()}:{zoo.model_class_name(model_type)}.forward"
    (config_folder / ".git").mkdir(exist_ok=True)
    (config_folder / "tensorcost.yaml").write_text(
        f"dims: {{batch: {zoo.BATCH}, seq: {zoo.SEQ}}}\ncausal_attention_flops: dense\nsite_packages: auto\n"
        f"models:\n" + "".join(
            f"  {mode}: {{entry: '{entry}', inputs: {{input_ids: int64 batch seq}}, dims_from: config.json, "
            f"mode: {mode}, assume: {{'self.config._attn_implementation': eager}}}}\n" for mode in zoo.MODES))
    return config_folder


def timed_run(folder: Path, mode: str) -> tuple[float, str]:
    """(CPU seconds of one `tensorcost model` process, the totals line it printed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "tensorcost_lint.cli.main", "model", mode], cwd=folder,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    totals = next((line for line in done.stdout.splitlines() if line.startswith("totals")), done.stderr.strip()[:80])
    return cpu, totals.split(" flops_range")[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("architectures", nargs="*", default=["llama"])
    parser.add_argument("--layers", default="2,80", help="two depths, shallow first")
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args(argv)
    shallow, deep = (int(n) for n in options.layers.split(","))
    print(f"{'architecture':<14} {'mode':<10} {'layers':>6} {'CPU s':>7}  totals")
    with tempfile.TemporaryDirectory() as directory:
        for model_type in options.architectures:
            for mode in zoo.MODES:
                medians = []
                for layers in (shallow, deep):
                    folder = write_config(Path(directory), model_type, layers)
                    runs = [timed_run(folder, mode) for _ in range(options.repeats)]
                    medians.append(statistics.median(cpu for cpu, _ in runs))
                    print(f"{model_type:<14} {mode:<10} {layers:>6} {medians[-1]:>7.2f}  {runs[-1][1]}")
                print(f"{model_type:<14} {mode:<10} {'ratio':>6} {medians[1] / medians[0]:>7.2f}  "
                      f"({deep} vs {shallow} layers; issue 21 asks 0.80-1.20)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
