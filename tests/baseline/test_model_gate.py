"""Contract 8 for configured models, on an unannotated nanoGPT-style model (tests/whole_model/
gate_fixture.py): the baseline records the model's totals and the sites only the model costs; the
gate flags grown sites (TCL601) and the grown model (TCL602); the pull-request table shows the
models first."""

from __future__ import annotations

import json

from tests.cli.inprocess import tensorcost_in
from tests.whole_model.gate_fixture import MODEL, make_project

WIDER = MODEL.replace("4 * config.n_embd", "8 * config.n_embd")


def _baseline(project):
    ran = tensorcost_in(project, "baseline", "--no-cache")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "tensorcost: wrote 0 site(s) and 1 model(s) to tensorcost-baseline.json\n"
    return (project / "tensorcost-baseline.json").read_bytes()


def _gate(project, *extra):
    return tensorcost_in(project, "check", "--no-cache", "--baseline", "tensorcost-baseline.json", *extra, "model.py")


def test_the_baseline_records_the_models_totals_and_sites_byte_identically(tmp_path):
    project = make_project(tmp_path)
    first = _baseline(project)
    assert _baseline(project) == first
    model = json.loads(first)["models"]["gpt"]
    assert (model["entry"], model["mode"]) == ("model.py:GPT.forward", "inference")
    per_layer = 196608 + 32768 + 32768 + 65536 + 262144 + 262144  # c_attn, q@kᵀ, att@v, c_proj, c_fc, c_proj
    assert model["totals"]["flops"] == model["totals"]["forward_flops"] == 3 * per_layer + 204800
    assert model["totals"]["backward_flops"] == 0 and model["totals"]["peak_retained_bytes"] == 28672
    assert isinstance(model["totals"]["lower_bound_seconds"], str)
    keys = [(s["qualname"], s["expression"], s["module"]) for s in model["sites"]]
    assert ("MLP.forward", "self.c_fc(x)", "h.mlp.c_fc") in keys and ("MLP.forward", "self.c_proj(h)", "h.mlp.c_proj") in keys
    assert len(keys) == 7


def test_inserting_lines_at_the_top_moves_nothing(tmp_path):
    project = make_project(tmp_path)
    _baseline(project)
    (project / "model.py").write_text('"""A docstring."""\n\nimport os\n\n\n' + MODEL)
    ran = _gate(project)
    assert ran.returncode == 0, ran.stdout
    assert "TCL60" not in ran.stdout
    assert ran.stdout.splitlines()[-1] == "baseline: 0 site(s) grew, 0 new, 0 removed"


def test_doubling_the_mlp_width_flags_both_projections_and_the_model(tmp_path):
    project = make_project(tmp_path)
    _baseline(project)
    (project / "model.py").write_text(WIDER)
    ran = _gate(project)
    assert ran.returncode == 1
    flagged = [line for line in ran.stdout.splitlines() if " TCL60" in line]
    assert [line.split(" model cost")[0].split(" cost regression")[0] for line in flagged] == [
        "model.py:13:20: TCL601", "model.py:14:16: TCL601", "model.py:56:5: TCL602"]
    assert flagged[0].startswith(
        "model.py:13:20: TCL601 cost regression: model.py::MLP.forward `self.c_fc(x)` in model `gpt` at h.mlp.c_fc "
        "grew past budgets.regression 0%: FLOPs 262 kFLOP → 524 kFLOP (×2.0)")
    assert flagged[2] == (
        "model.py:56:5: TCL602 model cost regression: model `gpt` grew past budgets.regression 0%: "
        "FLOPs 2.76 MFLOP → 4.33 MFLOP (×1.57), forward FLOPs 2.76 MFLOP → 4.33 MFLOP (×1.57), "
        "traffic 472 kB → 669 kB (×1.42), peak retained bytes 28.7 kB → 36.9 kB (×1.29), lower bound 140.9 ns → 199.6 ns (×1.42); "
        "reduce the cost, or accept it with `tensorcost baseline`")
    assert ran.stdout.splitlines()[-1] == "baseline: 1 model(s) grew, 2 site(s) grew, 0 new, 0 removed"


def test_markdown_shows_the_model_first_then_the_doubled_rows(tmp_path):
    project = make_project(tmp_path)
    _baseline(project)
    (project / "model.py").write_text(WIDER)
    ran = _gate(project, "--format", "markdown")
    assert ran.returncode == 1
    lines = ran.stdout.splitlines()
    assert lines[2] == ("1 model(s) and 2 site(s) grew past `budgets.regression`, 7 cost(s) changed, "
                        "0 new site(s), 0 removed.")
    assert lines[4:7] == ["| model | cost | before | after | ratio |", "|---|---|---:|---:|---:|",
                          "| `gpt` | FLOPs | 2.76 MFLOP | 4.33 MFLOP | ×1.57 |"]
    site_table = lines.index("| site | cost | before | after | ratio |")
    assert site_table > 6
    assert lines[site_table + 2] == ("| model.py MLP.forward `self.c_fc(x)` in model `gpt` at h.mlp.c_fc | FLOPs "
                                     "| 262 kFLOP | 524 kFLOP | ×2.0 |")
    assert sum("×2.0 |" in line for line in lines) == 3  # c_fc FLOPs and output bytes, c_proj FLOPs


def test_a_bigger_regression_budget_lets_the_model_through(tmp_path):
    project = make_project(tmp_path, "budgets: {regression: 100%}\n")
    _baseline(project)
    (project / "model.py").write_text(WIDER)
    ran = _gate(project)
    assert ran.returncode == 0 and "TCL60" not in ran.stdout


def test_a_run_that_analyses_no_model_says_nothing_of_the_models(tmp_path):
    project = make_project(tmp_path)
    _baseline(project)
    ran = tensorcost_in(project, "check", "--no-cache", "--baseline", "tensorcost-baseline.json", "-",
                        "--stdin-filename", "model.py", stdin=MODEL)
    assert ran.returncode == 0 and "model" not in ran.stdout.split("baseline:", 1)[1]
    (project / "tensorcost.yaml").write_text((project / "tensorcost.yaml").read_text().split("models:")[0])
    ran = _gate(project)
    assert "baseline: removed model `gpt`" in ran.stdout.splitlines()
