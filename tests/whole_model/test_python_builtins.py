"""Builtins and standard library calls model code decides its layers with — `sorted`, `set`,
`setattr`/`getattr` of an f-string, a dict attribute filled per key, `itertools.chain`, `reversed`,
`OrderedDict` — each read from the fixture's own code, the totals held against FlopCounterMode."""

import pytest

torch = pytest.importorskip("torch")

from tests.whole_model.fixtures.styles.python_builtins import Chained  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

ENTRY = "tests/whole_model/fixtures/styles/python_builtins.py:Chained.forward"
BATCH, STEPS, DIM = 2, 4, 16


def _reference(training: bool) -> int:
    from torch.utils.flop_counter import FlopCounterMode

    model = Chained()
    model.train(training)
    with FlopCounterMode(display=False) as counter:
        head, wide = model(torch.randn(BATCH, STEPS, DIM))
        if training:
            (head.sum() + wide.sum()).backward()
    return counter.get_total_flops()


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_builtins_decide_the_layers_exactly(tmp_path, capsys, mode):
    record = model_record(tmp_path, capsys, {"B": BATCH, "T": STEPS}, ENTRY, {"x": f"float32 B T {DIM}"}, mode)
    assert record["totals"]["flops"] == _reference(mode == "training")
    assert record["complete"] is True
    sites = {site["module"]: site for site in record["sites"]}
    # torch's names: blocks.0 and blocks.1 are one built module repeated (one row), blocks.2 the third
    assert set(sites) == {"blocks.0", "blocks.2", "head.out", "tables.local_proj"}
    if mode == "inference":
        # `getattr(self, f"{kind}_proj")` with kind "local": the second kind in sorted order, 2 * dim wide
        assert sites["tables.local_proj"]["flops"] == 2 * BATCH * STEPS * DIM * 2 * DIM
        runs = {module: sum(s["executions"] for s in record["sites"] if s["module"] == module)
                for module in ("blocks.0", "blocks.2")}
        assert runs == {"blocks.0": 2, "blocks.2": 1}
