"""Class-level Python semantics a factory classmethod reads (fixtures/auto_classes/auto_nets.py):
`@classmethod` bound to the class it is read from, a class attribute bound to a module-level
object, `type(obj)` of an object of the tree, `cls.__name__`, and `in` / `[]` on an object whose
class defines `__contains__` / `__getitem__`. The built model's total equals FlopCounterMode's."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tensorcost_lint.cli.main import main  # noqa: E402
from tests.whole_model.model_runs import counted_flops  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "auto_classes" / "auto_nets.py"


def _run(tmp_path, capsys, build: str) -> tuple[int, dict, str]:
    (tmp_path / ".git").mkdir()
    shutil.copy(FIXTURE, tmp_path / "auto_nets.py")
    config = tmp_path / "tensorcost.yaml"
    config.write_text(f"dims: {{batch: 2}}\nmodels:\n  net:\n    build: \"{build}\"\n"
                      f"    inputs: {{x: \"float32 batch 24\"}}\n")
    code = main(["model", "--config", str(config), "--format", "json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out)["models"][0] if code == 0 else {}, captured.err


def test_a_classmethod_factory_picks_the_class_by_the_config_type(tmp_path, capsys):
    code, record, err = _run(tmp_path, capsys, "AutoNet.from_config(TinyConfig(dim=24, hidden=40))")
    assert code == 0, err
    sys.path.insert(0, str(FIXTURE.parent))
    try:
        import auto_nets

        model = auto_nets.AutoNet.from_config(auto_nets.TinyConfig(dim=24, hidden=40))
    finally:
        sys.path.remove(str(FIXTURE.parent))
        sys.modules.pop("auto_nets", None)
    assert record["complete"] is True
    assert record["totals"]["flops"] == counted_flops(model, torch.randn(2, 24), training=False)
    assert {row["class"] for row in record["modules"]} >= {"TinyNet"}


def test_a_config_type_the_registry_lacks_builds_nothing(tmp_path, capsys):
    """`type(config) in cls._registry` is False: the factory raises, so no module is built."""
    code, _, err = _run(tmp_path, capsys, "AutoNet.from_config(OtherConfig(dim=24))")
    assert code == 2 and "builds no module object" in err
