"""A builder picked by the spec's class from a module-level table (`BUILDERS[type(spec)](dim,
spec)`, `type(spec) not in BUILDERS`: a class is a key by its identity) and a count of layers from a
set changed in place (`kinds.add`, `kinds.update`, `kinds.discard`), read from the fixture's own
code (fixtures/styles/type_dispatch.py); the totals held against FlopCounterMode on the model Python
builds with the same arguments, inference and training."""

from __future__ import annotations

import json
import shutil

import pytest

torch = pytest.importorskip("torch")
from tensorcost_lint.cli.main import main  # noqa: E402
from tests.whole_model.fixtures.styles import type_dispatch  # noqa: E402
from tests.whole_model.model_runs import counted_flops  # noqa: E402

BATCH, DIM = 3, 16


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("plan", ["mixed", "single"])
def test_a_builder_picked_by_the_spec_class_builds_each_block(tmp_path, capsys, plan, mode):
    shutil.copy(type_dispatch.__file__, tmp_path / "specnet.py")
    (tmp_path / ".git").mkdir()
    (tmp_path / "tensorcost.yaml").write_text(
        f"dims: {{B: {BATCH}}}\nmodels:\n  net:\n    build: \"specnet.SpecNet(plan='{plan}')\"\n"
        f"    inputs: {{x: \"float32 B {DIM}\"}}\n    mode: {mode}\n")
    assert main(["model", "--config", str(tmp_path / "tensorcost.yaml"), "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)["models"][0]
    torch.manual_seed(0)
    model = type_dispatch.SpecNet(plan=plan)
    assert record["complete"] is True and record["undecided"] == []
    assert record["totals"]["flops"] == counted_flops(model, torch.randn(BATCH, DIM), training=mode == "training")
    # the set holds "final" and, with the gated spec, "gated": one norm each ("dense" discarded)
    norms = sum(s["executions"] for s in record["sites"] if s["module"].split(".")[0] == "norms")
    assert norms == (2 if plan == "mixed" else 1)
    gated = {s["module"] for s in record["sites"] if s["module"].startswith("blocks.1.")}
    assert gated == ({"blocks.1.gate", "blocks.1.value", "blocks.1.out"} if plan == "mixed" else set())
