"""A sub-config read from config.json (fixtures/sub_configs): the nested dict a composite config's
`to_dict()` writes for its text part names its `model_type`, so the run reads it as an object of
that type's config class — `type(config.text_config)` is that class, a name absent from it is
absent (`getattr(config, "scale", None)`) — and an auto class's classmethod, called inside the
wrapper's constructor, finds the text model by that type several calls deep. `inner is not self`
compares the two objects. The total equals FlopCounterMode's on the model Python builds from the
same JSON."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tensorcost_lint.cli.main import main  # noqa: E402
from tests.whole_model.model_runs import counted_flops  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "sub_configs"
CONFIG = {"model_type": "wrapper", "classes": 7,
          "text_config": {"model_type": "text", "dim": 24, "hidden": 40, "layers": 3, "vocab": 50}}


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_a_sub_config_builds_its_model_through_an_auto_class(tmp_path, capsys, mode):
    (tmp_path / ".git").mkdir()
    shutil.copytree(FIXTURE, tmp_path / "wrapnet")
    (tmp_path / "wrapper.config.json").write_text(json.dumps(CONFIG))
    (tmp_path / "tensorcost.yaml").write_text(
        "dims: {batch: 2, seq: 8}\nmodels:\n  net:\n    build: \"wrapnet.modeling_wrapper.WrapperNet(config)\"\n"
        f"    dims_from: wrapper.config.json\n    inputs: {{ids: \"int64 batch seq\"}}\n    mode: {mode}\n")
    code = main(["model", "--config", str(tmp_path / "tensorcost.yaml"), "--format", "json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    record = json.loads(captured.out)["models"][0]
    sys.path.insert(0, str(tmp_path))
    try:
        from wrapnet.configuration_wrapper import WrapperConfig
        from wrapnet.modeling_wrapper import WrapperNet

        model = WrapperNet(WrapperConfig(**{k: v for k, v in CONFIG.items() if k != "model_type"}))
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n.split(".")[0] == "wrapnet"]:
            del sys.modules[name]
    assert record["complete"] is True
    assert record["totals"]["flops"] == counted_flops(model, torch.randint(0, 50, (2, 8)),
                                                      training=mode == "training")
    assert {row["class"] for row in record["modules"]} >= {"WrapperNet", "TextModel"}
