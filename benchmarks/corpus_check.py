"""Run `tensorcost check` over real code nobody here wrote, and print what happened.

    .venv/bin/python benchmarks/corpus_check.py /tmp/corpus/nanogpt /tmp/corpus/tlens ...
    .venv/bin/python benchmarks/corpus_check.py --config my.yaml --jobs 2 PATH

Each PATH is one row: files and lines checked, call sites found and resolved, findings per code,
TCL900 (internal errors: must be 0), tracebacks on stderr (must be 0), the exit code, wall time and
peak memory of the run. The check runs as users run it (a subprocess, `--format json`), cold (a
fresh cache directory), with `--config` pointing at a config that declares the dims common in
public model code (nanoGPT's B/T/C, TransformerLens's batch/pos/d_model, Hugging Face's
hidden_size/num_heads, JAX's b/t/d) unless --config is given. No corpus is committed: fetch one
(e.g. `git archive` of a repository, or the model folders of a wheel) and pass its path.
Exit 1 if any row has a TCL900 or a traceback.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tensorcost_lint.safe_io.files import discover  # noqa: E402

# Sizes of a GPT-2-small-class model: what these names mean in the codebases they come from.
DEFAULT_CONFIG = """\
dims:
  B: 8
  T: 1024
  C: 768
  nh: 12
  hs: 64
  n_embd: 768
  n_head: 12
  batch: 8
  batch_size: 8
  pos: 1024
  seq: 1024
  seq_len: 1024
  query_pos: 1024
  key_pos: 1024
  d_model: 768
  d_head: 64
  d_mlp: 3072
  d_vocab: 50257
  n_heads: 12
  head_index: 12
  hidden_size: 768
  num_heads: 12
  head_dim: 64
  b: 8
  t: 1024
  d: 768
  h: 12
sequence_dims: [T, seq, seq_len, pos, query_pos, key_pos, t]
"""


def _lines(files: list[str]) -> int:
    total = 0
    for path in files:
        try:
            with open(path, "rb") as handle:
                total += sum(1 for _ in handle)
        except OSError:
            pass
    return total


def check_corpus(path: str, config: str, jobs: int) -> dict:
    files, _ = discover([path], lambda _: ())
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryFile("w+") as out, \
            tempfile.TemporaryFile("w+") as err:
        env = {**os.environ, "TENSORCOST_CACHE_DIR": cache}
        argv = [sys.executable, "-m", "tensorcost_lint.cli.main", "check", path, "--config", config,
                "--format", "json", "--exit-zero", "--extend-select", "TCL501"]
        if jobs > 1:
            argv += ["--jobs", str(jobs)]
        start = time.perf_counter()
        process = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=ROOT)
        _, status, usage = os.wait4(process.pid, 0)  # this child's own rusage, not all children's
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    row = {"corpus": path, "files": len(files), "lines": _lines(files), "exit": os.waitstatus_to_exitcode(status),
           "seconds": seconds, "peak_mib": usage.ru_maxrss / 1024, "tracebacks": stderr.count("Traceback"),
           "stderr": stderr.strip().splitlines()[-1:] if stderr.strip() else []}
    try:
        report = json.loads(stdout)
    except ValueError:
        row.update(checked=None, sites=None, resolved=None, codes={}, tcl900=None)
        return row
    codes = collections.Counter(f["code"] for f in report["findings"])
    row.update(checked=report["files_checked"], sites=len(report["sites"]),
               resolved=sum(1 for s in report["sites"] if s["resolved"]),
               codes=dict(sorted(codes.items())), tcl900=codes.get("TCL900", 0),
               reasons=collections.Counter((s.get("reason") or "").split(":")[0][:50]
                                           for s in report["sites"] if not s["resolved"]).most_common(3))
    return row


def render(rows: list[dict]) -> str:
    header = ("corpus", "files", "lines", "sites", "resolved", "TCL900", "tracebacks", "exit", "wall s", "peak MiB",
              "findings per code (TCL501 = one ledger per resolved site)")
    table = [header]
    for row in rows:
        codes = ", ".join(f"{code} {count}" for code, count in row["codes"].items()) or "-"
        table.append((row["corpus"], str(row["files"]), str(row["lines"]), str(row["sites"]), str(row["resolved"]),
                      str(row["tcl900"]), str(row["tracebacks"]), str(row["exit"]), f"{row['seconds']:.2f}",
                      f"{row['peak_mib']:.0f}", codes))
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in table]
    lines.insert(1, "  ".join("-" * width for width in widths))
    for row in rows:
        if row.get("reasons"):
            lines.append(f"{row['corpus']}: most common unresolved reasons: "
                         + "; ".join(f"{reason or '(none)'} x{count}" for reason, count in row["reasons"]))
        if row["stderr"]:
            lines.append(f"{row['corpus']}: stderr: {row['stderr'][0]}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", metavar="PATH", help="corpus directories (or files)")
    parser.add_argument("--config", help="tensorcost.yaml to use (default: a GPT-2-sized one, written to a temp dir)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        config = args.config
        if config is None:
            config = str(Path(directory) / "tensorcost.yaml")
            Path(config).write_text(DEFAULT_CONFIG)
        rows = [check_corpus(path, os.path.abspath(config), args.jobs) for path in args.paths]
    print(json.dumps(rows, indent=2, default=str) if args.json else render(rows))
    return 1 if any(row["tcl900"] or row["tracebacks"] or row["tcl900"] is None for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
