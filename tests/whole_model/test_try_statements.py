"""try / except / else in model code: the `else:` block continues the path that raised nothing,
each handler starts a path of its own, and a path that returns or raises ends there. A probe of the
environment (`try: check_output(["ninja", ...]) except: return False else: return True`) may
return either, so a branch on it is undecided, never taken as the handler's answer; a handler that
raises leaves the body's path (`else: width *= 2`) as the only one. A body the run followed with
no doubt (every read found, every call followed, nothing undecided) raised nothing: no handler
runs; a body that is one read of an attribute its object certainly lacks raised AttributeError:
its handler runs alone."""

import json
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from tensorcost_lint.cli.main import main  # noqa: E402
from tests.whole_model.fixtures.styles import try_statements  # noqa: E402
from tests.whole_model.fixtures.styles.try_statements import ProbedBlock, SettingsBlock  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

FIXTURE = Path(try_statements.__file__)

ENTRY = "tests/whole_model/fixtures/styles/try_statements.py:ProbedBlock.forward"
BATCH, HIDDEN = 3, 16


def _record(tmp_path, capsys, assume=()):
    return model_record(tmp_path, capsys, {"B": BATCH}, ENTRY, {"x": f"float32 B {HIDDEN}"}, assume=assume)


def test_a_probe_of_the_environment_is_undecided(tmp_path, capsys):
    record = _record(tmp_path, capsys)
    assert record["undecided"] == ["self.fused"]  # each side costed; `assume` decides


@pytest.mark.parametrize("fused", [True, False])
def test_each_side_when_assumed_equals_flop_counter_mode(tmp_path, capsys, fused):
    model = ProbedBlock()
    model.fused = fused  # what the probe would have found
    record = _record(tmp_path, capsys, assume=[f"self.fused={str(fused).lower()}"])
    assert record["undecided"] == [] and record["complete"] is True
    # the width comes from the `else:` block: expansion(16) is 32, as Python computes it
    assert {site["module"]: site["flops"] for site in record["sites"]} == {
        "up": 2 * BATCH * HIDDEN * 2 * HIDDEN, "down": 2 * BATCH * 2 * HIDDEN * HIDDEN}
    assert record["totals"]["flops"] == counted_flops(model, torch.randn(BATCH, HIDDEN), training=False)



@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("kind", ["wide", "narrow", "unlisted"])
def test_a_body_known_to_raise_nothing_runs_no_handler(tmp_path, capsys, kind, mode):
    """`KIND_WIDTHS[kind]` found (the table's width, not the handler's 4) or certainly missing (the
    handler's 4); the mixin's `super().__getattribute__("width")` read as Python's own lookup (16,
    not the default 8) and `"depth"`, which the object lacks, the handler's default (2): every size
    known, the total FlopCounterMode's."""
    shutil.copy(FIXTURE, tmp_path / "probed.py")
    (tmp_path / ".git").mkdir()
    (tmp_path / "tensorcost.yaml").write_text(
        f"dims: {{B: {BATCH}}}\nmodels:\n  block:\n    build: \"probed.SettingsBlock(kind='{kind}')\"\n"
        f"    inputs: {{x: \"float32 B {HIDDEN}\"}}\n    mode: {mode}\n")
    assert main(["model", "--config", str(tmp_path / "tensorcost.yaml"), "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)["models"][0]
    expected = counted_flops(SettingsBlock(kind=kind), torch.randn(BATCH, HIDDEN), training=mode == "training")
    assert record["complete"] is True and record["undecided"] == []
    assert record["totals"]["flops"] == expected
