"""Contract 8 acceptance on a nanoGPT-style model: baseline bytes, the gate's exit codes, findings,
summary and pull-request table, as users see them."""

from __future__ import annotations

import json

from tests.cli.inprocess import tensorcost_in

from .conftest import MODEL


def _baseline(project, *extra):
    ran = tensorcost_in(project, "baseline", "--no-cache", *extra)
    assert ran.returncode == 0, ran.stderr
    return (project / "tensorcost-baseline.json").read_bytes()


def _gate(project, *extra):
    return tensorcost_in(project, "check", "--no-cache", "--baseline", "tensorcost-baseline.json", *extra, "model.py")


def test_baseline_twice_gives_identical_bytes_sorted_exact_and_stamped(project):
    first = _baseline(project)
    assert _baseline(project) == first
    document = json.loads(first)
    assert document["tool"] == "tensorcost" and document["tool_version"] == "0.1.0"
    assert document["config_fingerprint"].startswith("sha256:") and document["baseline_version"] == 1
    keys = [(s["path"], s["qualname"], s["expression"], s["occurrence"]) for s in document["sites"]]
    assert keys == sorted(keys) == [
        ("model.py", "CausalSelfAttention.forward", "att @ v", 0),
        ("model.py", "CausalSelfAttention.forward", "q @ k.transpose(-2, -1)", 0),
        ("model.py", "CausalSelfAttention.forward", "self.c_attn(x)", 0),
        ("model.py", "MLP.forward", "self.c_fc(x)", 0),
        ("model.py", "MLP.forward", "self.c_proj(h)", 0),
    ]
    fc = document["sites"][3]
    # B*T*n_embd*(4*n_embd) multiply-adds, 2 FLOPs each; the output [2, 100, 128] float32
    assert fc["flops"] == 2 * 2 * 100 * 32 * 128 and fc["output_bytes"] == 2 * 100 * 128 * 4
    assert fc["traffic_bytes"] == (2 * 100 * 32 + 32 * 128 + 2 * 100 * 128) * 4
    assert isinstance(fc["lower_bound_seconds"], str) and "." in fc["lower_bound_seconds"]
    assert first.endswith(b"}\n")


def test_baseline_to_stdout_matches_the_file(project):
    written = _baseline(project)
    ran = tensorcost_in(project, "baseline", "--no-cache", "--output", "-")
    assert ran.stdout.encode() == written


def test_inserting_lines_at_the_top_moves_nothing(project):
    _baseline(project)
    (project / "model.py").write_text('"""A docstring."""\n\nimport os\n\n\n' + MODEL)
    ran = _gate(project)
    assert ran.returncode == 0, ran.stdout
    assert "TCL601" not in ran.stdout
    assert ran.stdout.splitlines()[-1] == "baseline: 0 site(s) grew, 0 new, 0 removed"


def test_doubling_the_mlp_width_flags_both_projections(project):
    _baseline(project)
    (project / "model.py").write_text(MODEL.replace("4 * config.n_embd", "8 * config.n_embd"))
    ran = _gate(project)
    assert ran.returncode == 1
    flagged = [line for line in ran.stdout.splitlines() if "TCL601" in line]
    assert [line.split(" TCL601")[0] for line in flagged] == ["model.py:15:20:", "model.py:16:16:"]
    assert flagged[0] == (
        "model.py:15:20: TCL601 cost regression: model.py::MLP.forward `self.c_fc(x)` grew past budgets.regression 0%: "
        "FLOPs 1.64 MFLOP → 3.28 MFLOP (×2.0), output bytes 102 kB → 205 kB (×2.0), traffic 144 kB → 263 kB (×1.82), "
        "lower bound 43.1 ns → 78.56 ns (×1.82); reduce the cost, or accept it with `tensorcost baseline`")
    assert "FLOPs 1.64 MFLOP → 3.28 MFLOP (×2.0)" in flagged[1]
    assert ran.stdout.splitlines()[-1] == "baseline: 2 site(s) grew, 0 new, 0 removed"


def test_markdown_shows_the_doubled_rows_first_with_units(project):
    _baseline(project)
    (project / "model.py").write_text(MODEL.replace("4 * config.n_embd", "8 * config.n_embd"))
    ran = _gate(project, "--format", "markdown")
    assert ran.returncode == 1
    lines = ran.stdout.splitlines()
    start = lines.index("| site | cost | before | after | ratio |")
    assert lines[start + 1] == "|---|---|---:|---:|---:|"
    assert lines[start + 2:start + 5] == [
        "| model.py MLP.forward `self.c_fc(x)` | FLOPs | 1.64 MFLOP | 3.28 MFLOP | ×2.0 |",
        "| model.py MLP.forward `self.c_fc(x)` | output bytes | 102 kB | 205 kB | ×2.0 |",
        "| model.py MLP.forward `self.c_proj(h)` | FLOPs | 1.64 MFLOP | 3.28 MFLOP | ×2.0 |",
    ]
    assert "2 site(s) grew past `budgets.regression`, 7 cost(s) changed, 0 new site(s), 0 removed." in lines
    assert sum(line.startswith("- `model.py:") and "**TCL601**" in line for line in lines) == 2


def test_new_and_removed_sites_are_listed(project):
    _baseline(project)
    edited = MODEL.replace("return self.c_proj(h)", "return self.c_proj(h) + self.c_proj(h)")
    edited = edited.replace("att @ v", "att.matmul(v)")
    (project / "model.py").write_text(edited)
    ran = _gate(project)
    assert ran.returncode == 0
    assert ran.stdout.splitlines()[-4:] == [
        "baseline: removed site model.py::CausalSelfAttention.forward `att @ v`",
        "baseline: new site model.py::CausalSelfAttention.forward `att.matmul(v)`",
        "baseline: new site model.py::MLP.forward `self.c_proj(h)` #2",
        "baseline: 0 site(s) grew, 2 new, 1 removed",
    ]
    markdown = _gate(project, "--format", "markdown").stdout
    assert "### New sites\n\n- model.py CausalSelfAttention.forward `att.matmul(v)`\n" in markdown
    assert "### Removed sites\n\n- model.py CausalSelfAttention.forward `att @ v`\n" in markdown


def test_a_file_not_checked_is_not_listed_as_removed(project):
    (project / "other.py").write_text(MODEL)
    tensorcost_in(project, "baseline", "--no-cache", "model.py", "other.py")
    ran = _gate(project)  # pre-commit passes only the staged file
    assert ran.returncode == 0 and "removed site" not in ran.stdout
    (project / "other.py").unlink()
    assert "baseline: removed site other.py::MLP.forward `self.c_fc(x)`" in _gate(project).stdout


def test_another_version_or_config_is_noted_and_still_compared(project):
    _baseline(project)
    document = json.loads((project / "tensorcost-baseline.json").read_text())
    document["tool_version"] = "0.0.9"
    (project / "tensorcost-baseline.json").write_text(json.dumps(document))
    ran = _gate(project, "--dim", "T=200")
    assert ran.returncode == 1
    assert ("baseline: note: the baseline was written by tensorcost 0.0.9, this is 0.1.0; costs compared anyway"
            in ran.stdout.splitlines())
    assert ("baseline: note: the config fingerprint differs from the baseline's (dims, dtypes, hardware, execution "
            "or policies changed); costs compared anyway") in ran.stdout.splitlines()
    assert ran.stdout.splitlines()[-1] == "baseline: 5 site(s) grew, 0 new, 0 removed"
    markdown = _gate(project, "--dim", "T=200", "--format", "markdown").stdout
    assert "> **Note:** the baseline was written by tensorcost 0.0.9" in markdown
    # the two T^2 matmuls grow most (×4 when T doubles) and come first, then by site and cost
    rows = markdown.split("|---|---|---:|---:|---:|\n", 1)[1].splitlines()
    assert rows[:3] == [
        "| model.py CausalSelfAttention.forward `att @ v` | FLOPs | 1.28 MFLOP | 5.12 MFLOP | ×4.0 |",
        "| model.py CausalSelfAttention.forward `q @ k.transpose(-2, -1)` | FLOPs | 1.28 MFLOP | 5.12 MFLOP | ×4.0 |",
        "| model.py CausalSelfAttention.forward `q @ k.transpose(-2, -1)` | output bytes | 320 kB | 1.28 MB | ×4.0 |",
    ]


def test_budgets_regression_lets_smaller_growth_through(project):
    _baseline(project)
    (project / "tensorcost.yaml").write_text("dims: {B: 2, T: 104, n_embd: 32, n_head: 4, hs: 8}\n"
                                             "budgets: {regression: 5%}\n")
    ran = _gate(project)
    # T 100 -> 104: the projections grow 4% (allowed), the two T^2 matmuls 8.16% (not)
    flagged = [line for line in ran.stdout.splitlines() if "TCL601" in line]
    assert [line.split(" cost regression: ")[1].split(" grew past")[0] for line in flagged] == [
        "model.py::CausalSelfAttention.forward `q @ k.transpose(-2, -1)`",
        "model.py::CausalSelfAttention.forward `att @ v`"]
    assert "grew past budgets.regression 5%: FLOPs 1.28 MFLOP → 1.38 MFLOP (×1.08)" in flagged[0]
    (project / "tensorcost.yaml").write_text("dims: {B: 2, T: 104, n_embd: 32, n_head: 4, hs: 8}\n"
                                             "budgets: {regression: 8.17%}\n")
    assert _gate(project).returncode == 0
    (project / "tensorcost.yaml").write_text("dims: {B: 2, T: 104, n_embd: 32, n_head: 4, hs: 8}\n")
    assert sum("TCL601" in line for line in _gate(project).stdout.splitlines()) == 5


def test_warm_cache_gives_the_same_gate(project):
    cache = str(project / "cache")
    tensorcost_in(project, "baseline", "--cache-dir", cache)
    written = (project / "tensorcost-baseline.json").read_bytes()
    tensorcost_in(project, "baseline", "--cache-dir", cache)  # served from the cache
    assert (project / "tensorcost-baseline.json").read_bytes() == written
    (project / "model.py").write_text(MODEL.replace("4 * config.n_embd", "8 * config.n_embd"))
    args = ("check", "--cache-dir", cache, "--baseline", "tensorcost-baseline.json", "model.py")
    cold, warm = tensorcost_in(project, *args), tensorcost_in(project, *args)
    assert cold.stdout == warm.stdout and warm.returncode == 1
    assert warm.stdout.count("TCL601") == 2


def test_noqa_and_ignore_turn_the_rule_off(project):
    _baseline(project)
    edited = MODEL.replace("4 * config.n_embd", "8 * config.n_embd").replace(
        "h = F.gelu(self.c_fc(x))", "h = F.gelu(self.c_fc(x))  # noqa: TCL601")
    (project / "model.py").write_text(edited)
    flagged = [line for line in _gate(project).stdout.splitlines() if "TCL601" in line]
    assert [line.split(":")[1] for line in flagged] == ["16"]
    assert _gate(project, "--ignore", "TCL601").returncode == 0


def test_stdin_is_gated_too(project):
    _baseline(project)
    ran = tensorcost_in(project, "check", "--no-cache", "--baseline", "tensorcost-baseline.json", "-",
                        "--stdin-filename", "model.py", stdin=MODEL.replace("4 * config", "8 * config"))
    assert ran.returncode == 1 and ran.stdout.count("TCL601") == 2
