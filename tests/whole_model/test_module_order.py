"""Module-level Python read in the order it runs (module_order.py), and packages that load their
names lazily. fixtures/module_order/widths_net.py: tables changed in place at the top of a module
(`.update`, `[key] = value`, `+=`), a value read from a table before the changes, a table rebound
from its own earlier value. fixtures/lazy_registry/modelhub: an auto class whose tables are
extended and rebound at import time, finding the model class by importing its model type's
package by name and reading the class off it, each package listing its names for type checkers
as star imports under `if TYPE_CHECKING:`. Every total equals FlopCounterMode's."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tensorcost_lint.cli.main import main  # noqa: E402
from tests.whole_model.model_runs import counted_flops  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
WIDTHS = FIXTURES / "module_order" / "widths_net.py"
LIBRARY = FIXTURES / "lazy_registry"


def _run(tmp_path, capsys, build: str, inputs: str, mode: str, site: Path | None = None) -> tuple[int, dict, str]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    site_line = f"site_packages: '{site}'\n" if site is not None else ""
    config = tmp_path / "tensorcost.yaml"
    config.write_text(f"dims: {{batch: 2}}\n{site_line}models:\n  net:\n    build: \"{build}\"\n"
                      f"    inputs: {{x: \"{inputs}\"}}\n    mode: {mode}\n")
    code = main(["model", "--config", str(config), "--format", "json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out)["models"][0] if code == 0 else {}, captured.err


def _imported(folder: Path, module: str):
    """The fixture imported by Python, for the reference (the analysis never imports it)."""
    sys.path.insert(0, str(folder))
    try:
        return __import__(module, fromlist=["_"])
    finally:
        sys.path.remove(str(folder))


@pytest.fixture
def forget_imports():
    yield
    for name in [n for n in sys.modules if n in ("widths_net", "stage_net", "kernel_net") or n.split(".")[0] == "modelhub"]:
        del sys.modules[name]


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("size", ["small", "large", "huge"])
def test_module_level_tables_are_read_as_of_each_statement(tmp_path, capsys, forget_imports, size, mode):
    """`STEM_WIDTH` is read before `WIDTHS["small"]` changes (32, not 48); `huge` exists only in the
    table rebound from its earlier value; `STAGES += [...]` adds blocks. A reading in any other
    order gives another width or depth, so another total."""
    shutil.copy(WIDTHS, tmp_path / WIDTHS.name)
    code, record, err = _run(tmp_path, capsys, f"WidthNet(size='{size}')", "float32 batch 32", mode)
    assert code == 0, err
    model = _imported(WIDTHS.parent, "widths_net").WidthNet(size=size)
    assert record["complete"] is True
    assert record["totals"]["flops"] == counted_flops(model, torch.randn(2, 32), training=mode == "training")


# (config class and keywords, the model class Python picks): "deep" is only in the table extended by
# `.update`, "tiny-wide" only in the rebound table and the `[key] = value` one, and its class lives in
# another model type's package
CONFIGS = {
    "tiny": ("models.tiny", "TinyConfig", {"dim": 24, "hidden": 40}, "TinyNet"),
    "deep": ("models.deep", "DeepConfig", {"dim": 24, "depth": 3}, "DeepNet"),
    "tiny-wide": ("models.tiny", "WideConfig", {"dim": 24, "hidden": 40, "widen": 3}, "WideNet"),
}


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("model_type", sorted(CONFIGS))
def test_an_auto_class_finds_the_model_in_a_lazy_package(tmp_path, capsys, forget_imports, model_type, mode):
    package, config_class, keywords, expected_class = CONFIGS[model_type]
    arguments = ", ".join(f"{key}={value}" for key, value in keywords.items())
    code, record, err = _run(tmp_path, capsys,
                             f"modelhub.auto.AutoNet.from_config(modelhub.{package}.{config_class}({arguments}))",
                             "float32 batch 24", mode, site=LIBRARY)
    assert code == 0, err
    config = getattr(_imported(LIBRARY, f"modelhub.{package}"), config_class)(**keywords)
    model = _imported(LIBRARY, "modelhub.auto").AutoNet.from_config(config)
    assert type(model).__name__ == expected_class
    assert record["complete"] is True
    assert record["totals"]["flops"] == counted_flops(model, torch.randn(2, 24), training=mode == "training")
    assert {row["class"] for row in record["modules"]} >= {expected_class}


# -- property setters: `self.x = v` (and `setattr(self, "x", v)`) on a class with `@x.setter` runs it ----

STAGES = FIXTURES / "property_setters" / "stage_net.py"


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("build, keywords", [
    ("StageNet(width=24)", {"width": 24}),
    ("StageNet(width=24, overrides={'1': 40, '2': 56}, depth=3)", {"width": 24, "overrides": {"1": 40, "2": 56},
                                                                     "depth": 3}),
    ("StageNet(width=24, stages=3, overrides={'1': 8, '2': 40}, depth=9)",
     {"width": 24, "stages": 3, "overrides": {"1": 8, "2": 40}, "depth": 9}),
])
def test_a_property_setter_runs_when_the_constructor_assigns(tmp_path, capsys, forget_imports, build, keywords, mode):
    """The widths are the setter's expansion of the overrides and the depth its clamp (9 -> 4): the
    value assigned itself (a dict, 9) would build another model or none."""
    shutil.copy(STAGES, tmp_path / STAGES.name)
    code, record, err = _run(tmp_path, capsys, build, "float32 batch 24", mode)
    assert code == 0, err
    model = _imported(STAGES.parent, "stage_net").StageNet(**keywords)
    assert record["complete"] is True
    assert record["totals"]["flops"] == counted_flops(model, torch.randn(2, 24), training=mode == "training")


# -- a module-level name a function rebinds (`global`) is not its first binding's value ---------------------

KERNEL = FIXTURES / "module_order" / "kernel_net.py"


def test_a_name_a_function_rebinds_is_undecided_until_assumed(tmp_path, capsys, forget_imports):
    """`_fused = None` at the top, rebound by `load_fused()` (`global _fused`), which the constructor
    calls when the environment asks: once that function has run, reading `_fused` as None would
    call the plain path certain. Undecided, the total is partial; the user's `assume` picks the
    path Python took, and the total is exact."""
    shutil.copy(KERNEL, tmp_path / KERNEL.name)
    code, record, err = _run(tmp_path, capsys, "KernelNet()", "float32 batch 16", "inference")
    assert code == 0, err
    assert record["complete"] is False and "_fused is None" in record["undecided"]
    (tmp_path / "tensorcost.yaml").write_text((tmp_path / "tensorcost.yaml").read_text().replace(
        "    mode: inference\n", "    mode: inference\n    assume: {\"_fused is None\": true}\n"))
    code = main(["model", "--config", str(tmp_path / "tensorcost.yaml"), "--format", "json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    record = json.loads(captured.out)["models"][0]
    model = _imported(KERNEL.parent, "kernel_net").KernelNet()
    assert record["complete"] is True
    assert record["totals"]["flops"] == counted_flops(model, torch.randn(2, 16), training=False)
