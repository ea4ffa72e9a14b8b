"""The flake8 plugin, driven through flake8 itself: same findings as `tensorcost check`, 0-based
columns, stdin, flake8's noqa, options from flake8 config files, --jobs, and no crash on bad config."""

from __future__ import annotations

import pytest

from .conftest import located, run_flake8

MODEL_FILES = ["models/clean_mlp.py", "models/einsum_chains.py", "models/gpt_attention.py",
               "models/jaxtyping_attention.py", "models/mixed_precision.py"]


def test_flake8_select_tcl_reports_exactly_what_tensorcost_check_reports(model_repo, tensorcost):
    # The ledger is default-off: named exactly (TCL501), never turned on by the prefix TCL.
    flake8 = run_flake8("--isolated", "--select", "TCL,TCL501", *MODEL_FILES, cwd=model_repo)
    check = tensorcost("check", "--select", "TCL,TCL501", *MODEL_FILES, cwd=model_repo)
    assert check.returncode == 1, check.stderr
    assert flake8.returncode == 1, flake8.stderr
    expected = located(check.stdout)
    # Every kind of finding the models hold is compared, so a column slip in any rule shows here.
    assert {code for *_, code in expected} >= {"TCL101", "TCL102", "TCL301", "TCL303", "TCL401", "TCL402",
                                               "TCL403", "TCL501"}
    assert located(flake8.stdout) == expected


def test_default_selection_agrees_and_hides_the_ledger(model_repo, tensorcost):
    flake8 = run_flake8("--isolated", *MODEL_FILES, cwd=model_repo)
    check = tensorcost("check", *MODEL_FILES, cwd=model_repo)
    shown = located(flake8.stdout)
    assert shown == located(check.stdout)
    assert shown and not any(code == "TCL501" for *_, code in shown)  # default-off via extend_default_ignore
    # flake8 printed 1-based columns of the 0-based ones we handed it: `torch.einsum` starts at column 14.
    assert ("models/jaxtyping_attention.py", 12, 14, "TCL401") in shown


def test_extend_select_turns_the_ledger_on(model_repo):
    result = run_flake8("--isolated", "--extend-select", "TCL501", "models/clean_mlp.py", cwd=model_repo)
    assert {code for *_, code in located(result.stdout)} == {"TCL501"}
    assert "TFLOP" in result.stdout


def test_stdin_uses_the_buffer_and_the_display_name_for_config(model_repo):
    # The buffer differs from the file on disk: only the buffer may be checked.
    text = (model_repo / "models" / "clean_mlp.py").read_text() + (
        "\n\ndef scores(q: Float[Tensor, \"batch heads seq d_head\"], k: Float[Tensor, \"batch heads d_head seq\"]):\n"
        "    return q @ k\n")
    text = text.replace("from jaxtyping import BFloat16", "from jaxtyping import BFloat16, Float")
    result = run_flake8("--isolated", "--select", "TCL4", "--stdin-display-name", "models/clean_mlp.py", "-",
                        cwd=model_repo, input=text)
    found = located(result.stdout)
    # seq=8192 comes from models/tensorcost.yaml, found from the display name's directory.
    line = text.splitlines().index("    return q @ k") + 1
    assert ("models/clean_mlp.py", line, 12, "TCL401") in found, result.stdout + result.stderr
    assert "seq=8192" in result.stdout


def test_noqa_is_flake8s_own(model_repo):
    path = model_repo / "models" / "jaxtyping_attention.py"
    line = '    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / q.shape[-1] ** 0.5'
    source = path.read_text().replace(line, line + "  # noqa: TCL401")
    path.write_text(source)
    quiet = located(run_flake8("--isolated", "--select", "TCL4", str(path.relative_to(model_repo)),
                               cwd=model_repo).stdout)
    assert {code for *_, code in quiet} == {"TCL402"}
    loud = located(run_flake8("--isolated", "--select", "TCL4", "--disable-noqa", str(path.relative_to(model_repo)),
                              cwd=model_repo).stdout)
    assert {code for *_, code in loud} == {"TCL401", "TCL402"}


@pytest.mark.parametrize("config_name", ["setup.cfg", "tox.ini", ".flake8"])
def test_options_are_read_from_flake8_config_files(model_repo, config_name):
    # Dims from the flake8 config beat tensorcost.yaml: at seq=64 nothing is over budget.
    (model_repo / config_name).write_text("[flake8]\nselect = TCL,TCL501\n"
                                          "tensorcost-dim = seq=64,\n    batch=1\ntensorcost-hardware = h200\n")
    result = run_flake8("models/jaxtyping_attention.py", cwd=model_repo)
    codes = {code for *_, code in located(result.stdout)}
    assert "TCL401" not in codes and "TCL501" in codes, result.stdout + result.stderr
    assert "seq=64" in result.stdout and "on h200" in result.stdout


def test_command_line_dims_repeat_and_config_file_option(model_repo, tmp_path):
    other = tmp_path / "small.yaml"
    other.write_text("dims: {batch: 1, heads: 2, seq: 16, d_head: 8, d_model: 4, d_ff: 4}\n")
    result = run_flake8("--isolated", "--select", "TCL501", "--tensorcost-config", str(other),
                        "--tensorcost-dim", "seq=32", "--tensorcost-dim", "heads=4,batch=2",
                        "models/jaxtyping_attention.py", cwd=model_repo)
    assert "[batch=2, heads=4, seq=32, seq=32]" in result.stdout, result.stdout + result.stderr


def test_jobs_gives_the_same_findings_as_one_process(model_repo):
    serial = run_flake8("--isolated", "--select", "TCL", "--jobs", "1", "models", cwd=model_repo)
    parallel = run_flake8("--isolated", "--select", "TCL", "--jobs", "2", "--tensorcost-dim", "batch=8", "models",
                          cwd=model_repo)
    assert located(serial.stdout) and located(parallel.stdout) == located(serial.stdout)


def test_a_broken_tensorcost_yaml_is_one_finding_not_a_crash(model_repo):
    (model_repo / "models" / "tensorcost.yaml").write_text("dims: {seq: -8}\n")
    result = run_flake8("--isolated", "models/einsum_chains.py", "models/clean_mlp.py", cwd=model_repo)
    assert "Traceback" not in result.stderr
    tcl = [line for line in result.stdout.splitlines() if ": TCL" in line]
    assert len(tcl) == 2, result.stdout
    for line in tcl:
        assert ":1:1: TCL900 tensorcost config error:" in line
        assert "tensorcost.yaml: dims.seq:" in line and "positive" in line


def test_a_bad_dim_option_is_one_finding_per_file(model_repo):
    result = run_flake8("--isolated", "--tensorcost-dim", "seq=lots", "models/einsum_chains.py", cwd=model_repo)
    assert "Traceback" not in result.stderr
    assert located(result.stdout) == {("models/einsum_chains.py", 1, 1, "TCL900")}
    assert "--tensorcost-dim: seq=lots" in result.stdout


def test_syntax_errors_are_left_to_flake8(model_repo):
    (model_repo / "broken.py").write_text("import torch\n\ndef f(a, b:\n    return a @ b\n")
    result = run_flake8("--isolated", "broken.py", cwd=model_repo)
    assert result.stdout.count("E999") == 1 and "TCL" not in result.stdout


def test_flake8_lists_the_plugin():
    result = run_flake8("--version", cwd=".")
    assert "tensorcost-lint:" in result.stdout
