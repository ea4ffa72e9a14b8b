"""The roofline picture's labels (issue 14): on a crowded plot no two labels overlap, measured on
the rendered figure with matplotlib's own renderer; and D10 (issue 15): the analysed repository's
matplotlibrc has no say in how the picture is drawn."""

from __future__ import annotations

import argparse
import itertools

import pytest

from tests.conftest import run_tensorcost
from tests.measurement.test_report import PNG_SIZE, png_size

pytest.importorskip("matplotlib")

# 28 matmuls of neighbouring intensities on one roof: the crowding users saw on their models.
DIMS = {"a": 512, "b": 640, "c": 768, "d": 1024, "e": 1280, "f": 1536, "g": 2048}


def _crowded_model() -> str:
    lines = ["import torch", "from jaxtyping import Float", "from torch import Tensor", ""]
    for index, (x, y) in enumerate(itertools.product(DIMS, list(DIMS)[:4])):
        lines += [f'def f{index}(p: Float[Tensor, "{x} {y}"], q: Float[Tensor, "{y} {x}"]):', "    return p @ q", ""]
    return "\n".join(lines)


@pytest.fixture
def crowded(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "model.py").write_text(_crowded_model())
    (tmp_path / "tensorcost.yaml").write_text(
        "dims: {" + ", ".join(f"{k}: {v}" for k, v in DIMS.items()) + "}\nhardware: h100-sxm\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _rows():
    from tensorcost_lint.measurement.chosen_evidence import EvidenceResolver
    from tensorcost_lint.reporting.cost_table import site_rows
    from tensorcost_lint.driver.runner import lint_paths

    args = argparse.Namespace(evidence=[], hardware=None, traffic_boundary=None, dim=[], config=None)
    resolver = EvidenceResolver(args)
    return site_rows(lint_paths(["model.py"], resolver))


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_crowded_roofline_labels_do_not_overlap(crowded):
    from tensorcost_lint.reporting.roofline import draw_roofline, matplotlib_defaults

    rows = _rows()
    assert len(rows) == 28 and all(row.bound is not None for row in rows)
    with matplotlib_defaults():
        figure = draw_roofline(rows)
        figure.canvas.draw()
        renderer = figure.canvas.get_renderer()
        axes = figure.axes[0]
        texts = [t for t in axes.texts if t.get_text() and t.get_visible()]
        labels = [t for t in texts if t.get_text().startswith("#")]
        others = [t for t in texts if t not in labels]
        boxes = {t: (t.get_bbox_patch() or t).get_window_extent(renderer) for t in texts}
    assert len(labels) >= 20
    for first, second in itertools.combinations(labels, 2):
        assert not _overlap(boxes[first], boxes[second]), (first.get_text(), second.get_text())
    for label, other in itertools.product(labels, others):
        assert not _overlap(boxes[label], boxes[other]), (label.get_text(), other.get_text())
    roof_texts = [t.get_text() for t in others]
    for first, second in itertools.combinations(others, 2):
        assert not _overlap(boxes[first], boxes[second]), (first.get_text(), second.get_text())
    # every site is named: on the plot, or in the one line listing the ones left unlabelled
    named = " ".join(t.get_text() for t in texts)
    assert all(f"#{row.id} " in named + " " for row in rows)
    # roofs of equal peak share one label instead of printing two texts on one spot
    assert sum("float8_e5m2" in text for text in roof_texts) == 1
    assert "float8_e4m3fn, float8_e5m2, int8 dense-matmul: 1.979 PFLOP/s" in roof_texts


def test_d10_roofline_ignores_the_analysed_repositorys_matplotlibrc(project, tmp_path):
    # LaTeX is not needed (nor installed): the picture must not follow the repository's settings
    (project / "matplotlibrc").write_text("text.usetex: True\nfont.family: cursive\nsavefig.dpi: 7\n"
                                          "figure.figsize: 2, 2\n")
    picture = tmp_path / "roofline.png"
    result = run_tensorcost("report", "model.py", "--roofline", str(picture), cwd=project)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "latex" not in result.stderr.lower()
    assert png_size(picture.read_bytes()) == PNG_SIZE
    page = tmp_path / "page.html"
    result = run_tensorcost("report", "model.py", "--html", str(page), cwd=project)
    assert result.returncode == 0, result.stderr
    assert "<svg" in page.read_text()
