"""try / except / else in model code: the `else:` block continues the path that raised nothing,
each handler starts a path of its own, and a path that returns or raises ends there. A probe of the
environment (`try: check_output(["ninja", ...]) except: return False else: return True`) may
return either, so a branch on it is undecided, never taken as the handler's answer; a handler that
raises leaves the body's path (`else: width *= 2`) as the only one."""

import pytest

torch = pytest.importorskip("torch")

from tests.whole_model.fixtures.styles.try_statements import ProbedBlock  # noqa: E402
from tests.whole_model.model_runs import counted_flops, model_record  # noqa: E402

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
