"""Containers as libraries build them — `nn.Sequential(OrderedDict(...))`, `nn.Sequential`
subclasses with and without a `forward` of their own, nested, and a Sequential of layers appended
under a condition on the index in a helper — held against FlopCounterMode running the same model,
with module paths as torch names them (`named_modules`)."""

import pytest

torch = pytest.importorskip("torch")

from tests.whole_model.fixtures.containers.sequential_forms import Net  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

ENTRY = "tests/whole_model/fixtures/containers/sequential_forms.py:Net.forward"
BATCH, STEPS = 2, 8


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_sequential_forms_equal_flop_counter_mode(tmp_path, capsys, mode):
    model = Net()
    expected = counted_flops(model, torch.zeros(BATCH, STEPS, 16), training=mode == "training")
    record = model_record(tmp_path, capsys, {"B": BATCH, "T": STEPS}, ENTRY, {"x": "float32 B T 16"}, mode)
    assert record["totals"]["flops"] == expected
    assert record["unresolved_sites"] == 0 and record["not_followed"] == [] and record["undecided"] == []
    named = dict(model.named_modules())
    modules = {site["module"] for site in record["sites"]}
    # the OrderedDict's key, a subclass's items, a nested Sequential, appends skipped by a condition
    assert {"stem.proj", "stages.0", "stages.1.0", "blocks.0", "blocks.2", "blocks.3", "head.fc"} == modules
    assert all(type(named[path]) is torch.nn.Linear for path in modules if not path.startswith("stages"))


def test_a_sequential_subclass_without_forward_inside_a_sequential_is_no_internal_error(tmp_path, capsys):
    """The shape that once raised `'NoneType' object has no attribute 'bound'`: a Stage (no forward
    of its own) as an item of another nn.Sequential."""
    record = model_record(tmp_path, capsys, {"B": BATCH, "T": STEPS}, ENTRY, {"x": "float32 B T 16"})
    stages = [site for site in record["sites"] if site["module"].startswith("stages")]
    assert [site["executions"] for site in stages] == [2, 2]  # depth 2, each stage's one Linear repeated


def test_a_module_chosen_by_its_layer_index_in_the_constructor_is_built_per_index(tmp_path, capsys):
    """`self.ff = wide if index % 2 == 1 else narrow` in layers built by `range(depth)`: each layer is
    built with its own index, as Python builds it (loop_indices), so the total is complete and equals
    FlopCounterMode — never the else side alone as a complete total (what it once reported), nor a
    range over all-wide and all-narrow stacks."""
    from tests.whole_model.fixtures.containers.alternating import Stack

    model = Stack()
    expected = counted_flops(model, torch.zeros(BATCH, STEPS, 16), training=False)
    record = model_record(tmp_path, capsys, {"B": BATCH, "T": STEPS},
                          "tests/whole_model/fixtures/containers/alternating.py:Stack.forward",
                          {"x": "float32 B T 16"})
    assert record["totals"]["flops_range"] == [expected, expected] and record["totals"]["flops"] == expected
    assert record["complete"] is True and record["undecided"] == []


@pytest.mark.parametrize("mode", ["inference", "training"])
def test_subclasses_of_torch_layers_run_torch_forward(tmp_path, capsys, mode):
    """`super().forward(ids)` of an nn.Embedding subclass looks up rows; an nn.Linear subclass with no
    body of its own is built and run as nn.Linear."""
    from tests.whole_model.fixtures.containers.torch_subclasses import TinyLM

    model = TinyLM()
    ids = torch.zeros(BATCH, STEPS, dtype=torch.long)
    expected = counted_flops(model, ids, training=mode == "training")
    record = model_record(tmp_path, capsys, {"B": BATCH, "T": STEPS},
                          "tests/whole_model/fixtures/containers/torch_subclasses.py:TinyLM.forward",
                          {"input_ids": "int64 B T"}, mode)
    assert record["totals"]["flops"] == expected and record["complete"] is True
    assert {site["module"] for site in record["sites"]} == {"proj", "head"}
