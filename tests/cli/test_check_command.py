"""`tensorcost check` as users and CI run it, in process (`main(argv)`): its exit code, its exact output."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, assert_one_line_error, run_tensorcost

ATTENTION = '''\
from jaxtyping import Float
from torch import Tensor


def scores(q: Float[Tensor, "batch heads seq d_head"], k: Float[Tensor, "batch heads seq d_head"]):
    return q @ k.transpose(-2, -1)
'''
CLEAN = '''\
from jaxtyping import Float
from torch import Tensor


def project(x: Float[Tensor, "tokens d_model"], w: Float[Tensor, "d_model d_ff"]):
    return x @ w
'''
CONFIG = "dims: {batch: 8, heads: 16, seq: 8192, d_head: 128}\n"
SUMMARY = "Found 2 findings in 1 file (checked 2 files; costed 1 of 2 call sites)"
# mlp.py's dims are not declared: the run says so instead of passing silently.
HINT = ("hint: 1 call site not costed; sizes missing most often: d_ff (1), d_model (1), tokens (1); "
        "`tensorcost init` writes a tensorcost.yaml listing the dims your code names")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()  # the repository root: config discovery stops here
    (tmp_path / "tensorcost.yaml").write_text(CONFIG)
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "attention.py").write_text(ATTENTION)
    (tmp_path / "model" / "mlp.py").write_text(CLEAN)
    return tmp_path


def test_text_format_lines_and_summary(project):
    result = run_tensorcost("check", "model", cwd=project)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("model/attention.py:6:12: TCL401 quadratic materialization: `q @ k.transpose(-2, -1)`")
    assert "[batch=8, heads=16, seq=8192, seq=8192] float32 = 34.4 GB > budget 256 MiB (268 MB); ×4 when seq doubles" in lines[0]
    assert lines[1].startswith("model/attention.py:6:12: TCL402 ")
    assert lines[-2:] == [SUMMARY, HINT]
    assert result.stderr == ""


def test_clean_files_exit_zero(project):
    result = run_tensorcost("check", "model/mlp.py", cwd=project)
    assert result.returncode == 0
    assert result.stdout == f"All checks passed (checked 1 file; costed 0 of 1 call site)\n{HINT}\n"


def test_exit_zero_and_output_file(project):
    result = run_tensorcost("check", "model", "--exit-zero", "--output", "report.txt", cwd=project)
    assert result.returncode == 0 and result.stdout == ""
    assert (project / "report.txt").read_text().endswith(f"{SUMMARY}\n{HINT}\n")


def test_json_report_contract_6(project):
    result = run_tensorcost("check", "model", "--format", "json", cwd=project)
    data = json.loads(result.stdout)
    assert data["version"] == 1 and data["files_checked"] == 2
    codes = [f["code"] for f in data["findings"]]
    assert codes == ["TCL401", "TCL402"]
    finding = data["findings"][0]
    assert (finding["path"], finding["line"], finding["column"], finding["severity"]) == ("model/attention.py", 6, 12, "warning")
    site = data["sites"][finding["site"]]
    assert site["expression"] == "q @ k.transpose(-2, -1)"
    assert site["operands"] == [
        {"shape": ["batch", "heads", "seq", "d_head"], "dtype": "float32"},
        {"shape": ["batch", "heads", "d_head", "seq"], "dtype": "float32"},
    ]
    assert site["output"] == {"shape": ["batch", "heads", "seq", "seq"], "dtype": "float32"}
    assert (site["operation"], site["framework"], site["resolved"]) == ("matmul", "torch", True)
    assert site["flops"] == 2199023255552 and site["flops_formula"] == "2*batch*heads*seq^2*d_head"
    assert site["output_bytes"] == 34359738368 and site["traffic_bytes"] == 35433480192
    assert site["retained_bytes"] == 34359738368
    assert site["arithmetic_intensity"] == 62.06 and site["lower_bound_seconds"] == 0.03282
    assert site["bottleneck"] == "COMPUTE" and len(site["plan_id"]) == 20
    unresolved = [s for s in data["sites"] if not s["resolved"]]
    assert len(unresolved) == 1 and "unbound dims: tokens, d_model, d_ff" in unresolved[0]["reason"]
    assert unresolved[0]["flops"] is None and unresolved[0]["lower_bound_seconds"] is None


def test_statistics(project):
    result = run_tensorcost("check", "model", "--statistics", cwd=project)
    assert "     1  TCL401" in result.stdout and "     1  TCL402" in result.stdout
    assert "call sites: 1 resolved / 2 found" in result.stdout


def test_select_ignore_extend_select(project):
    only_402 = run_tensorcost("check", "model", "--select", "TCL402", cwd=project)
    assert [l.split()[1] for l in only_402.stdout.splitlines() if l.startswith("model/")] == ["TCL402"]
    no_4 = run_tensorcost("check", "model", "--ignore", "TCL4", cwd=project)
    assert no_4.returncode == 0
    ledger = run_tensorcost("check", "model", "--extend-select", "TCL501", cwd=project)
    codes = [l.split()[1] for l in ledger.stdout.splitlines() if l.startswith("model/")]
    assert codes.count("TCL501") == 2 and "TCL401" in codes


def test_dim_flag_beats_config_and_pragma(project):
    source = "# tensorcost: dims seq=512\n" + ATTENTION
    (project / "model" / "attention.py").write_text(source)
    assert run_tensorcost("check", "model/attention.py", cwd=project).returncode == 0  # pragma wins over config
    result = run_tensorcost("check", "model/attention.py", "--dim", "seq=16384", cwd=project)
    assert "seq=16384" in result.stdout and "137 GB" in result.stdout


def test_hardware_flag_changes_the_bound(project):
    h100 = json.loads(run_tensorcost("check", "model", "--format", "json", cwd=project).stdout)
    l4 = json.loads(run_tensorcost("check", "model", "--format", "json", "--hardware", "l4", cwd=project).stdout)
    assert l4["sites"][0]["lower_bound_seconds"] > h100["sites"][0]["lower_bound_seconds"]


def test_examples_main_job():
    result = run_tensorcost("check", str(EXAMPLES), "--statistics")
    assert result.returncode == 1
    for code in ("TCL002", "TCL301", "TCL302", "TCL401", "TCL402", "TCL403", "TCL502"):
        assert code in result.stdout, code
    assert "clean_mlp.py" not in result.stdout
    assert "call sites: 24 resolved / 26 found" in result.stdout


@pytest.mark.parametrize(
    "args,fragments",
    [
        (["check", "nowhere"], ["nowhere", "no such file or directory"]),
        (["check", "--dim", "seq"], ["--dim", "NAME=SIZE"]),
        (["check", "--dim", "seq=0"], ["--dim", "positive"]),
        (["check", "--hardware", "tpu-v9"], ["unknown hardware id 'tpu-v9'"]),
        (["check", "--format", "xml"], ["invalid choice: 'xml'"]),
        (["check", "--select", "TCL4;"], ["--select"]),
        (["check", "--jobs", "0"], ["--jobs"]),
        (["check", "--unknown-flag"], ["unrecognized arguments: --unknown-flag"]),
    ],
)
def test_usage_errors_exit_2_with_one_line(project, args, fragments):
    assert_one_line_error(run_tensorcost(*args, cwd=project), *fragments)


@pytest.mark.parametrize(
    "config,fragments",
    [
        ("dims: {seq: 0}\n", ["tensorcost.yaml", "dims.seq", "positive"]),
        ("dims: {seq: -4}\n", ["dims.seq"]),
        ("dims: [1, 2]\n", ["dims", "expected a mapping"]),
        ("dimz: {seq: 1}\n", ["dimz", "unknown key"]),
        ("budgets: {quadratic_bytes: 256MB2}\n", ["budgets.quadratic_bytes", "byte size"]),
        ("budgets: {quadratic_bytes: 0}\n", ["budgets.quadratic_bytes", "positive"]),
        ("budgets: {contraction_regret: 0.5}\n", ["budgets.contraction_regret"]),
        ("budgets: {latency: 1}\n", ["budgets.latency", "unknown key"]),
        ("broadcast_policy: loose\n", ["broadcast_policy", "loose"]),
        ("default_dtype: float13\n", ["default_dtype", "float13"]),
        ("hardware: tpu-v9\n", ["hardware", "tpu-v9"]),
        ("execution: {count: 4, liveness: serial-reuse, retained_copies: 4}\n", ["execution", "ambiguous liveness"]),
        ("frameworks: {torch_einsum: fastest}\n", ["frameworks.torch_einsum"]),
        ("select: [TCL4, 5]\n", ["select[1]"]),
        ("evidence: [missing.yaml]\n", ["missing.yaml", "file not found"]),
        ("dims: {seq: 8\n", ["invalid YAML"]),
        ("!!python/object/apply:os.system ['touch pwned']\n", ["invalid YAML"]),
    ],
)
def test_bad_config_exits_2_naming_file_key_and_reason(project, config, fragments):
    (project / "tensorcost.yaml").write_text(config)
    result = run_tensorcost("check", "model", cwd=project)
    assert_one_line_error(result, *fragments)
    assert not (project / "pwned").exists()


def test_directory_walk_skips_git_venvs_caches_and_excluded_globs(project):
    for directory in (".git", ".venv", "venv2", "__pycache__", "node_modules", "generated"):
        (project / directory).mkdir(exist_ok=True)
        (project / directory / "attention.py").write_text(ATTENTION)
    (project / "venv2" / "pyvenv.cfg").write_text("home = /usr\n")
    (project / "tensorcost.yaml").write_text(CONFIG + "exclude: [generated, '*_pb2.py']\n")
    (project / "model" / "weights_pb2.py").write_text(ATTENTION)
    result = run_tensorcost("check", ".", cwd=project)
    assert result.stdout.splitlines()[-2:] == [SUMMARY, HINT]
    assert "./model/attention.py:6:12" in result.stdout


def test_symlink_loop_does_not_hang(project):
    (project / "model" / "loop").symlink_to(project / "model")
    result = run_tensorcost("check", "model", cwd=project)
    assert result.stdout.splitlines()[-2:] == [SUMMARY, HINT]


def test_no_python_files_exit_zero(tmp_path):
    (tmp_path / "README.md").write_text("# nothing\n")
    result = run_tensorcost("check", ".", cwd=tmp_path)
    assert result.returncode == 0
    assert "No Python files to check" in result.stdout


def test_syntax_error_and_undecodable_file_do_not_stop_the_run(project):
    (project / "model" / "broken.py").write_text("def f(a, b:\n    return a @ b\n")
    (project / "model" / "latin1.py").write_bytes(b"x = '\xff\xfe'\n")
    result = run_tensorcost("check", "model", cwd=project)
    assert "model/broken.py:1:" in result.stdout and "E999 SyntaxError" in result.stdout
    assert "model/latin1.py:1:1: E902 cannot decode file" in result.stdout
    assert "model/attention.py:6:12: TCL401" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_noqa_silences_a_code_on_its_line(project):
    source = ATTENTION.replace("k.transpose(-2, -1)", "k.transpose(-2, -1)  # noqa: TCL401")
    (project / "model" / "attention.py").write_text(source)
    result = run_tensorcost("check", "model", cwd=project)
    assert "TCL401" not in result.stdout and "TCL402" in result.stdout


def test_explain_prints_the_rule_page():
    result = run_tensorcost("explain", "TCL403")
    assert result.returncode == 0
    assert result.stdout.startswith("# costly-contraction-order (TCL403)")
    assert "## Use instead" in result.stdout
    assert_one_line_error(run_tensorcost("explain", "TCL999"), "unknown rule code")
    listing = run_tensorcost("explain")
    assert listing.stdout.count("| TCL") == 19  # TCL001 ... TCL900, with TCL404, TCL503, TCL504, TCL601 and TCL602
    assert "| TCL503 | model-budget | on |" in listing.stdout
