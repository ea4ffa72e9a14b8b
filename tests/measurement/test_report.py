"""`tensorcost report`: the table sorted by bound with totals, the roofline picture (PNG of the
expected size, SVG), and one self-contained HTML page holding every site and every finding."""

from __future__ import annotations

import json
import re
import struct
import subprocess
import sys

import pytest

from tests.conftest import ROOT, assert_one_line_error, run_tensorcost

pytest.importorskip("matplotlib")

PNG_SIZE = (1440, 810)  # 12 x 6.75 inches at 120 dpi, one device


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def _sites(project) -> list[dict]:
    result = run_tensorcost("check", "--format", "json", "model.py", cwd=project)
    return json.loads(result.stdout)["sites"]


def test_table_is_sorted_by_bound_with_totals_per_file_and_overall(project):
    result = run_tensorcost("report", "model.py", cwd=project)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("hardware: test-cpu")
    header = lines[2]
    for column in ("location", "operation", "shapes", "FLOPs", "bytes", "FLOP/B", "bound", "bottleneck", "findings"):
        assert column in header
    rows = lines[3:lines.index("", 3)]
    bounds = {s["id"]: s["lower_bound_seconds"] for s in _sites(project)}
    ids = [int(row.split()[0]) for row in rows]
    assert sorted(ids) == sorted(bounds)
    ordered = [bounds[i] for i in ids if bounds[i] is not None]
    assert ordered == sorted(ordered, reverse=True)
    assert ids[-1] == next(i for i, b in bounds.items() if b is None)  # the unresolved site comes last
    assert "unbound dims: mystery" in result.stdout
    assert any(line.startswith("model.py ") for line in lines) and any(line.startswith("all files") for line in lines)


def test_roofline_png_with_measured_points(numpy_measurements, tmp_path):
    _, _, project = numpy_measurements
    picture = tmp_path / "roofline.png"
    result = run_tensorcost("report", "model.py", "--roofline", str(picture), "--measurements", "measure.json",
                            cwd=project)
    assert result.returncode == 0, result.stderr
    data = picture.read_bytes()
    assert len(data) > 20_000 and png_size(data) == PNG_SIZE
    assert "measured" in result.stdout and "ratio" in result.stdout


def test_roofline_svg_keeps_labels_as_text(project, tmp_path):
    picture = tmp_path / "roofline.svg"
    assert run_tensorcost("report", "model.py", "--roofline", str(picture), cwd=project).returncode == 0
    text = picture.read_text()
    assert "<svg" in text and "dram-to-cpu" in text and "float32 dense-matmul" in text


def test_html_page_is_self_contained_and_holds_every_site_and_finding(numpy_measurements, tmp_path):
    _, measured, project = numpy_measurements
    page_path = tmp_path / "report.html"
    result = run_tensorcost("report", "model.py", "--html", str(page_path), "--measurements", "measure.json",
                            cwd=project)
    assert result.returncode == 0, result.stderr
    page = page_path.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    assert not re.search(r"<script|<link|src=\"http|href=\"http", page)
    for site in _sites(project):
        assert f'id="site-{site["id"]}"' in page
        assert f'{site["path"]}:{site["line"]}:{site["column"]}' in page
    findings = json.loads(run_tensorcost("check", "--format", "json", "model.py", cwd=project).stdout)["findings"]
    assert findings
    for finding in findings:
        assert finding["code"] in page
    ratios = [m["ratio"] for m in measured["measurements"] if m["ratio"] is not None]
    assert f"{ratios[0]:.2f}x" in page


def test_sites_without_evidence_still_get_a_picture(project, tmp_path):
    picture = tmp_path / "roofline.png"
    result = run_tensorcost("report", "model.py", "--hardware", "h100-sxm", "--traffic-boundary", "hbm-to-compute",
                            "--roofline", str(picture), cwd=project)
    assert result.returncode == 0, result.stderr
    assert png_size(picture.read_bytes()) == PNG_SIZE
    assert "h100-sxm" in result.stdout


@pytest.mark.parametrize("args, fragment", [
    (("--roofline", "picture.jpg"), "name a .png or .svg file"),
    (("--measurements", "model.py"), "not JSON"),
    (("--measurements", "tensorcost.yaml"), "not JSON"),
    (("--measurements", "absent.json"), "cannot read"),
    (("--html", "no/such/dir/page.html"), "cannot write"),
])
def test_bad_input_exits_2_with_one_line(project, args, fragment):
    assert_one_line_error(run_tensorcost("report", "model.py", *args, cwd=project), fragment)


def test_missing_matplotlib_names_the_plot_extra(project):
    code = ("import sys; sys.modules['matplotlib'] = None; from tensorcost_lint.cli.main import main; "
            "sys.exit(main(['report', 'model.py', '--roofline', 'r.png']))")
    result = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True, timeout=60,
                            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert_one_line_error(result, "matplotlib", "pip install matplotlib")
