"""`tensorcost check` with `models:` (Contract 7): sites reached from an entry are costed and linted
in that context, reported once per distinct shape context with their executions; TCL503 budgets."""

from __future__ import annotations

import json

from tests.cli.inprocess import tensorcost_in
from tests.whole_model.gate_fixture import MODEL, make_project

from tensorcost_lint.model_check import in_check
from tensorcost_lint.whole_model.values.model_facts import over_budget


def _json(project, *extra):
    ran = tensorcost_in(project, "check", "--no-cache", "--format", "json", *extra)
    return ran.returncode, json.loads(ran.stdout)


def test_an_unannotated_mlp_is_costed_and_linted_in_its_model_context(tmp_path):
    project = make_project(tmp_path, "budgets: {intermediate_bytes: 16000}\n")
    code, report = _json(project, "model.py")
    assert code == 1
    fc = [s for s in report["sites"] if s["expression"] == "self.c_fc(x)"]
    # the per-file analysis cannot cost it (x has no shape in MLP.forward); the model run can
    assert [(s["resolved"], s.get("contexts")) for s in fc] == [
        (False, None), (True, [{"model": "gpt", "modules": ["h.mlp.c_fc"], "executions": 3}])]
    costed = fc[1]
    assert (costed["line"], costed["column"], costed["path"]) == (13, 20, "model.py")
    assert costed["output"]["shape"] == ["B", "T", "4*n_embd"]
    assert costed["flops"] == 2 * 2 * 16 * 32 * 128  # per execution: B*T*n_embd*4n_embd multiply-adds
    assert [(f["line"], f["column"], f["code"], f["site"]) for f in report["findings"]] == [(13, 20, "TCL402", costed["id"])]
    assert report["findings"][0]["message"] == (
        "materialized output [B=2, T=16, 4*n_embd=128] float32 = 16.4 kB exceeds budgets.intermediate_bytes 16 kB; "
        "compute it in chunks or fuse it with its consumer (reached from model `gpt` at h.mlp.c_fc, 3 executions)")
    resolved = sorted((s["line"], s["expression"]) for s in report["sites"] if s["resolved"])
    assert resolved == [(13, "self.c_fc(x)"), (14, "self.c_proj(h)"), (26, "self.c_attn(x)"),
                        (30, "q @ k.transpose(-2, -1)"), (31, "att @ v"), (32, "self.c_proj(y)"),
                        (60, "self.lm_head(self.ln_f(x))")]


def test_text_output_and_noqa_and_ignores_apply_to_context_findings(tmp_path):
    project = make_project(tmp_path, "budgets: {intermediate_bytes: 16000}\n")
    ran = tensorcost_in(project, "check", "--no-cache", "model.py")
    assert ran.stdout.splitlines()[0].startswith("model.py:13:20: TCL402 materialized output [B=2, T=16, 4*n_embd=128]")
    assert ran.stdout.splitlines()[-1] == "models: `gpt` (inference): 2.76 MFLOP in total, 7 site context(s) in the files checked"
    (project / "model.py").write_text(MODEL.replace("h = F.gelu(self.c_fc(x))", "h = F.gelu(self.c_fc(x))  # noqa: TCL402"))
    assert tensorcost_in(project, "check", "--no-cache", "model.py").returncode == 0
    (project / "model.py").write_text(MODEL)
    assert tensorcost_in(project, "check", "--no-cache", "--ignore", "TCL402", "model.py").returncode == 0


def test_a_site_the_file_already_costs_identically_is_not_repeated(tmp_path):
    annotated = MODEL.replace("import torch\n", "import torch\nfrom jaxtyping import Float\nfrom torch import Tensor\n", 1)
    annotated = annotated.replace("    def forward(self, x):\n        h = F.gelu",
                                  '    def forward(self, x: Float[Tensor, "B T n_embd"]):\n        h = F.gelu')
    project = make_project(tmp_path, "budgets: {intermediate_bytes: 16000}\n", annotated)
    code, report = _json(project, "model.py")
    fc = [s for s in report["sites"] if s["expression"] == "self.c_fc(x)"]
    assert len(fc) == 1 and fc[0]["resolved"]
    assert fc[0]["contexts"] == [{"model": "gpt", "modules": ["h.mlp.c_fc"], "executions": 3}]
    assert [(f["line"], f["code"]) for f in report["findings"]] == [(15, "TCL402")]
    assert "reached from" not in report["findings"][0]["message"]  # the file's own finding, once


def test_a_function_reached_with_two_shapes_is_reported_once_per_context(tmp_path):
    model = MODEL.replace(
        "    def forward(self, idx):\n        x = self.wte(idx)\n",
        "    def forward(self, idx):\n        x = self.wte(idx)\n        wide = torch.cat([x, x], dim=-1)\n"
        "        pair(wide, wide)\n        pair(x, x)\n        pair(x, x)\n").replace(
        "class GPT(nn.Module):", "def pair(a, b):\n    return a @ b.transpose(-2, -1)\n\n\nclass GPT(nn.Module):")
    project = make_project(tmp_path, "", model)
    _, report = _json(project, "model.py")
    pair = [(s["operands"][0]["shape"], s["flops"], s["contexts"]) for s in report["sites"]
            if s["expression"] == "a @ b.transpose(-2, -1)" and s["resolved"]]
    assert pair == [
        (["B", "T", "n_embd"], 2 * 2 * 16 * 16 * 32, [{"model": "gpt", "modules": [""], "executions": 2}]),
        (["B", "T", "n_embd+n_embd"], 2 * 2 * 16 * 16 * 64, [{"model": "gpt", "modules": [""], "executions": 1}]),
    ]


def test_model_budget_tcl503_at_the_entry_def_line(tmp_path):
    project = make_project(tmp_path)
    (project / "tensorcost.yaml").write_text((project / "tensorcost.yaml").read_text()
                                              + "    budgets: {flops: 1000000, retained_bytes: 1000}\n")
    ran = tensorcost_in(project, "check", "--no-cache", "model.py")
    assert ran.returncode == 1
    lines = ran.stdout.splitlines()
    assert lines[0] == ("model.py:56:5: TCL503 whole-model budget: model `gpt` (inference) is over models.gpt.budgets: "
                        "total FLOPs 2.76 MFLOP > budgets.flops 1 MFLOP; peak retained bytes 28.7 kB > budgets.retained_bytes 1 kB; "
                        "reduce the model's cost or raise the budget")
    assert not any("budgets.retained_bytes not checked" in line for line in lines)
    assert tensorcost_in(project, "check", "--no-cache", "--ignore", "TCL503", "model.py").returncode == 0


def test_retained_bytes_budget_reads_the_totals_record(monkeypatch, tmp_path):
    """Once the analysis reports `totals.peak_retained_bytes`, the retained_bytes budget is checked."""
    real = in_check.model_json

    def with_retained(result, hardware_id):
        data = real(result, hardware_id)
        data["totals"]["peak_retained_bytes"] = 5000
        return data

    monkeypatch.setattr(in_check, "model_json", with_retained)
    project = make_project(tmp_path)
    (project / "tensorcost.yaml").write_text((project / "tensorcost.yaml").read_text()
                                              + "    budgets: {retained_bytes: 4KiB, latency_seconds: 1.0}\n")
    ran = tensorcost_in(project, "check", "--no-cache", "model.py")
    assert ran.stdout.splitlines()[0] == (
        "model.py:56:5: TCL503 whole-model budget: model `gpt` (inference) is over models.gpt.budgets: "
        "peak retained bytes 5 kB > budgets.retained_bytes 4.1 kB; reduce the model's cost or raise the budget")
    assert "not checked" not in ran.stdout
    cached = tensorcost_in(project, "check", "--cache-dir", str(tmp_path / "cache"), "model.py")
    assert tensorcost_in(project, "check", "--cache-dir", str(tmp_path / "cache"), "model.py").stdout == cached.stdout
    assert cached.stdout == ran.stdout
    fact, unchecked = over_budget("m", "training", {"flops": 10, "peak_retained_bytes": 10, "lower_bound_seconds": None},
                                  {"flops": 10, "retained_bytes": 9, "latency_seconds": 0.5})
    assert [(e.metric, e.value, e.budget) for e in fact.excesses] == [("retained_bytes", 10, 9)]
    assert unchecked == ["latency_seconds"]


def test_an_entry_that_cannot_be_read_is_a_config_error(tmp_path):
    project = make_project(tmp_path)
    (project / "tensorcost.yaml").write_text((project / "tensorcost.yaml").read_text().replace("GPT.forward", "Nope.forward"))
    ran = tensorcost_in(project, "check", "--no-cache", "model.py")
    assert ran.returncode == 2 and ran.stderr.count("\n") == 1
    assert "models.gpt.entry" in ran.stderr and "Nope is not defined at the top level of this file" in ran.stderr


def test_the_flake8_plugin_runs_no_model(tmp_path):
    from tensorcost_lint.adapters.flake8_plugin import TensorCostChecker

    project = make_project(tmp_path, "budgets: {intermediate_bytes: 16000}\n")
    (project / "tensorcost.yaml").write_text((project / "tensorcost.yaml").read_text() + "    budgets: {flops: 1}\n")
    lines = MODEL.splitlines(keepends=True)
    checker = TensorCostChecker(None, lines=lines, filename=str(project / "model.py"))
    found = [message for _, _, message, _ in checker.run()]
    assert not [m for m in found if m.startswith(("TCL503", "TCL402"))]  # the CLI gives both (tests above)


def test_a_cached_check_reruns_a_model_when_a_file_it_reached_changes(tmp_path, monkeypatch):
    from tensorcost_lint.model_check import check_merge

    runs = []
    real = check_merge.run_model
    monkeypatch.setattr(check_merge, "run_model", lambda entry, config: runs.append(entry.name) or real(entry, config))
    project = make_project(tmp_path, "budgets: {intermediate_bytes: 16000}\n")
    (project / "model.py").write_text(MODEL.replace("from torch.nn import functional as F\n",
                                                    "from torch.nn import functional as F\n\nfrom .parts import MLP\n")
                                      .split("class MLP", 1)[0] + "class Attention" + MODEL.split("class Attention", 1)[1])
    (project / "__init__.py").write_text("")
    parts = "import torch.nn as nn\nfrom torch.nn import functional as F\n\n\n" + "class MLP" + \
        MODEL.split("class MLP", 1)[1].split("class Attention", 1)[0]
    (project / "parts.py").write_text(parts)

    def check():
        ran = tensorcost_in(project, "check", "--cache-dir", str(tmp_path / "cache"), "--format", "json", "parts.py",
                            "model.py")
        return [(f["path"], f["line"], f["code"], f["message"].split(" = ")[1].split(" exceeds")[0])
                for f in json.loads(ran.stdout)["findings"]]

    first = check()
    assert ("parts.py", 12, "TCL402", "16.4 kB") in first and runs == ["gpt"]
    assert check() == first and runs == ["gpt"]  # nothing changed: served from the cache
    (project / "parts.py").write_text(parts.replace("4 * config.n_embd", "8 * config.n_embd"))  # not the entry's file
    assert ("parts.py", 12, "TCL402", "32.8 kB") in check() and runs == ["gpt", "gpt"]
    cached = [p for p in (tmp_path / "cache").rglob("*.json")]
    for path in cached:
        path.write_text(path.read_text().replace('"executions":3', '"executions":"3"'))  # a planted entry
    assert ("parts.py", 12, "TCL402", "32.8 kB") in check() and runs == ["gpt", "gpt", "gpt"]
