"""`nn.ParameterList` / `nn.ParameterDict` (whole_model/library/parameter_containers.py): a list or a
dict of parameters, read by index, key, iteration and zip as Python reads them; each tensor in the
model's parameters (Contract 9), named as `named_parameters()` names it. Totals against
FlopCounterMode and the parameter bytes against the model's own parameters, in both modes."""

import pytest

torch = pytest.importorskip("torch")

from tests.whole_model.fixtures.styles import parameter_containers as p  # noqa: E402
from tests.whole_model.model_runs import model_record, record_and_reference  # noqa: E402

CASES = {"depth-mixer": p.DepthMixer, "appended-gates": p.AppendedGates, "scaled-layers": p.ScaledLayers}


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_parameter_containers_cost_and_count_as_torch_does(tmp_path, capsys, case, mode):
    model = CASES[case]()
    record, reference = record_and_reference(tmp_path, capsys, model, {"B": 2}, "float32 B 8", torch.randn(2, 8), mode)
    assert record["complete"] is True, (record["not_followed"], record["unresolved_sites"])
    assert record["totals"]["flops"] == reference
    memory = record["totals"]["memory"]
    parameter_bytes = sum(t.numel() * t.element_size() for t in model.parameters())
    assert memory["parameters"] == parameter_bytes and "parameters" not in memory["unknown"]
    if mode == "training":  # every parameter feeds the loss: each has a gradient
        assert memory["gradients"] == parameter_bytes


def test_a_parameter_list_of_values_not_known_makes_the_parameter_count_partial(tmp_path, capsys):
    # never a silent short count: the list's tensors cannot be counted, and the count says why
    source = tmp_path / "opaque.py"
    source.write_text("import torch\nfrom torch import nn\nfrom elsewhere import make_weights\n\n\n"
                      "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                      "        self.weights = nn.ParameterList(make_weights())\n        self.proj = nn.Linear(8, 8)\n\n"
                      "    def forward(self, x):\n        return self.proj(x)\n")
    record = model_record(tmp_path, capsys, {"B": 2}, f"{source}:Net.forward", {"x": "float32 B 8"})
    memory = record["totals"]["memory"]
    assert memory["parameters"] is None
    assert "nn.ParameterList" in memory["unknown"]["parameters"]
