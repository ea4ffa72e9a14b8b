"""What a module's forward reads of the state its constructor left (fixtures/styles/object_state):
`hasattr(self, name)` is False only when the run saw every attribute the object can hold (its
classes all in the tree down to nn.Module, a mixin reached through a lazy package `__init__`, every
call handed the object followed), True when it holds the name, unknown otherwise; `module.eval()`
switches that module's `self.training`. Totals held against FlopCounterMode on the same classes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tests.whole_model.fixtures.styles.object_state import models  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

FIXTURE = Path(models.__file__)


def _record(tmp_path, capsys, cls: str, dims: dict, mode: str) -> dict:
    return model_record(tmp_path, capsys, dims, f"{FIXTURE}:{cls}.forward", {"x": "float32 B T dim"}, mode)


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("embedding_dim", [8, 16], ids=["no-projection", "projected"])
def test_hasattr_reads_what_the_constructor_set(tmp_path, capsys, mode, embedding_dim):
    dims = {"dim": 16, "embedding_dim": embedding_dim, "B": 2, "T": 4}
    torch.manual_seed(0)
    model = models.Encoder(16, embedding_dim)
    expected = counted_flops(model, torch.randn(2, 4, 16), training=mode == "training")
    result = _record(tmp_path, capsys, "Encoder", dims, mode)
    assert result["totals"]["flops"] == expected
    assert result["undecided"] == [] and result["unresolved_sites"] == 0 and result["not_followed"] == []
    projected = [s for s in result["sites"] if s["module"] == "embed_project"]
    assert len(projected) == (1 if embedding_dim != 16 else 0)


def test_hasattr_on_a_torch_layer_subclass_stays_unknown(tmp_path, capsys):
    """nn.Linear's own attributes are torch's: a name the tree never set may still be there, so the
    condition is listed and its side's call is not followed — never a silent False."""
    result = model_record(tmp_path, capsys, {"dim": 8, "B": 2, "T": 4}, f"{FIXTURE}:Tagged.forward",
                          {"x": "float32 B T dim"}, "inference")
    assert result["undecided"] == ['hasattr(self, "scale_proj")']
    assert [n["expression"] for n in result["not_followed"]] == ["self.scale_proj(y)"]


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_eval_switches_the_submodule_training_flag(tmp_path, capsys, mode):
    dims = {"dim": 8, "B": 2, "T": 4}
    torch.manual_seed(0)
    expected = counted_flops(models.FrozenProbe(8), torch.randn(2, 4, 8), training=mode == "training")
    result = _record(tmp_path, capsys, "FrozenProbe", dims, mode)
    assert result["totals"]["flops"] == expected
    assert result["undecided"] == [] and result["not_followed"] == []
    extras = sorted(s["module"] for s in result["sites"] if s["module"].endswith("extra"))
    assert extras == (["live.extra"] if mode == "training" else [])


def test_a_declared_dim_the_run_never_reads_is_a_warning(tmp_path, capsys):
    """Contract 7a: `width` names a constructor parameter whose default the built model keeps, and
    `--dim embed_dim=192` matches nothing: both listed, in JSON and text. Not listed: `depth` (read
    only as the length of a list its loop runs index by index), the inputs' dims, and a project dim
    no code the run read names (`d_vocab`, another file's: `dims` serves every file `check` reads)."""
    dims = {"dim": 8, "depth": 3, "width": 64, "d_vocab": 512, "B": 2, "T": 4}
    config = tmp_path / "tensorcost.yaml"
    config.write_text(f"dims: {dims}\n")
    from tensorcost_lint.cli.main import main

    argv = ["model", "--config", str(config), "--entry", f"{FIXTURE}:Stack.forward", "--input", "x=float32 B T dim",
            "--dim", "embed_dim=192"]
    assert main(argv + ["--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)["models"][0]
    assert result["warnings"] == ["dim 'width' = 64 (dims or --dim) matches nothing this run reads",
                                  "dim 'embed_dim' = 192 (dims or --dim) matches nothing this run reads"]
    assert result["totals"]["flops"] == 3 * 2 * 2 * 4 * 8 * 8 + 2 * 2 * 4 * 8 * 32  # width 32, the default
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert text.count("warning: dim") == 2 and "warning: dim 'embed_dim' = 192" in text


def test_past_the_bound_on_records_walked_no_dim_is_called_unread(tmp_path, capsys, monkeypatch):
    """Which dims a run reads is found by walking its records, bounded: a run with more than the
    bound says it cannot tell, rather than calling a dim read only past the cut unread."""
    from tensorcost_lint.cli.main import main
    from tensorcost_lint.whole_model.source import dim_reads

    config = tmp_path / "tensorcost.yaml"
    config.write_text("dims: {dim: 8, depth: 3, width: 64, B: 2, T: 4}\n")
    argv = ["model", "--config", str(config), "--entry", f"{FIXTURE}:Stack.forward", "--input", "x=float32 B T dim",
            "--format", "json"]
    monkeypatch.setattr(dim_reads, "_MAX_WALKED", 2)
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)["models"][0]
    assert result["warnings"] == ["which dims this run reads is not known: its records hold more than 2 entries "
                                  "(bounded work); no dim is reported unread"]
    monkeypatch.setattr(dim_reads, "_MAX_WALKED", 200_000)
    assert main(argv) == 0  # under the bound: `width` is unread again (the constructor's default is used)
    assert json.loads(capsys.readouterr().out)["models"][0]["warnings"] == [
        "dim 'width' = 64 (dims or --dim) matches nothing this run reads"]


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_a_loop_whose_carried_tensor_grows_costs_each_pass(tmp_path, capsys, mode):
    """`history = torch.cat([history, step[:, -1:]], dim=1)`: each pass reads one more row, so the
    loop runs pass by pass (a pass repeated `steps` times was a complete-looking wrong total)."""
    dims = {"dim": 8, "steps": 3, "B": 2, "T": 4}
    torch.manual_seed(0)
    expected = counted_flops(models.Growing(8, 3), torch.randn(2, 4, 8), training=mode == "training")
    result = _record(tmp_path, capsys, "Growing", dims, mode)
    assert result["totals"]["flops"] == expected and result["complete"] is True
    inside = sorted(s["flops"] for s in result["sites"] if s["line"] != result["sites"][-1]["line"])
    assert len(inside) == 3 and len(set(inside)) == 3  # T = 4, 5, 6 rows: three different passes


def test_a_growing_loop_of_too_many_passes_is_unresolved(tmp_path, capsys):
    """More passes than the run takes one by one: the passes after the first are not costed as the
    first one repeated; the sites say why."""
    result = _record(tmp_path, capsys, "Growing", {"dim": 8, "steps": 300, "B": 2, "T": 4}, "inference")
    assert result["complete"] is False
    reasons = {s["reason"] for s in result["sites"] if not s["resolved"]}
    assert any("`history` changes shape from pass to pass" in (r or "") for r in reasons), reasons


def test_a_summary_shared_by_many_calls_is_read_once_for_its_dims():
    """A callee's summary is one list shared by every call of it: 60 levels of two calls each is
    2**60 paths but 121 distinct entries, so `depth`, read after them, is found without a cut."""
    from types import SimpleNamespace

    from tensorcost_lint.whole_model.source.dim_reads import unread_warnings
    from tensorcost_lint.whole_model.values.objects import Called, Repeat

    entries = [Repeat(SimpleNamespace(name="inner"), [])]
    for _ in range(60):
        entries = [Called(entries), Called(entries)]
    entries = [Called(entries), Repeat(SimpleNamespace(name="depth"), [])]
    assert unread_warnings({"depth": 3}, {"depth": 3}, {}, entries, [], []) == []
    assert unread_warnings({}, {"width": 4}, {}, entries, [], []) == [
        "dim 'width' = 4 (dims or --dim) matches nothing this run reads"]
