"""A config class and its base both decorated by a class decorator that rewrites the class
(fixtures/styles/validated_config: `@validated` wraps `__setattr__`, as hub libraries' strict
dataclasses do). Python runs the base's class statement, decorators included, before the
subclass's: decorating the subclass finds the base decorated, never a decorator running inside
itself. The total is complete and equals FlopCounterMode on the same model."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from tensorcost_lint.cli.main import main  # noqa: E402
from tests.whole_model.fixtures.styles.validated_config import modeling  # noqa: E402
from tests.whole_model.fixtures.styles.validated_config.configuration import BlockConfig  # noqa: E402
from tests.whole_model.model_runs import counted_flops  # noqa: E402


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_a_decorated_config_chain_is_decorated_base_first(tmp_path, capsys, mode):
    config = BlockConfig(hidden_size=16, num_layers=3, expansion=2)
    torch.manual_seed(0)
    expected = counted_flops(modeling.BlockStack(config), torch.randn(2, 8, 16), training=mode == "training")
    (tmp_path / "config.json").write_text(json.dumps({**dataclasses.asdict(config), "model_type": config.model_type}))
    (tmp_path / "tensorcost.yaml").write_text("dims: {B: 2, T: 8}\n")
    argv = ["model", "--config", str(tmp_path / "tensorcost.yaml"), "--entry",
            f"{Path(modeling.__file__)}:BlockStack.forward", "--input", "x=float32 B T hidden_size",
            "--dims-from", str(tmp_path / "config.json"), "--mode", mode, "--format", "json"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)["models"][0]
    assert result["not_followed"] == []
    assert result["complete"] is True and result["totals"]["flops"] == expected
