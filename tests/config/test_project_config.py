"""Contract 2: discovery walking up from each file, both file forms, overrides, byte sizes."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from tensorcost_lint.config.byte_sizes import parse_byte_size
from tensorcost_lint.config.errors import ConfigError
from tensorcost_lint.config.config_discovery import ConfigResolver, Overrides, find_config_file, load_config_file


def test_nearest_config_wins_and_discovery_stops_at_the_repository_root(tmp_path: Path):
    (tmp_path / "tensorcost.yaml").write_text("dims: {seq: 1}\n")  # outside the repository
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "pkg" / "sub").mkdir(parents=True)
    assert find_config_file(repo / "pkg" / "sub" / "m.py") is None
    (repo / "pyproject.toml").write_text("[project]\nname = 'x'\n")  # no [tool.tensorcost]: skipped
    assert find_config_file(repo / "pkg" / "sub" / "m.py") is None
    (repo / "pyproject.toml").write_text("[tool.tensorcost]\ndims = {seq = 2}\n")
    assert find_config_file(repo / "pkg" / "sub" / "m.py") == repo / "pyproject.toml"
    (repo / "pkg" / "tensorcost.yaml").write_text("dims: {seq: 3}\n")
    assert find_config_file(repo / "pkg" / "sub" / "m.py") == repo / "pkg" / "tensorcost.yaml"
    resolver = ConfigResolver()
    assert resolver.for_path(repo / "pkg" / "sub" / "m.py").dims == {"seq": 3}
    assert resolver.for_path(repo / "other.py").dims == {"seq": 2}


def test_same_keys_in_yaml_and_pyproject(tmp_path: Path):
    yaml_file = tmp_path / "tensorcost.yaml"
    yaml_file.write_text(
        "dims: {batch: 8}\nbudgets: {quadratic_bytes: 1GiB, intermediate_bytes: 1.5GB, latency_seconds: 0.01}\n"
        "hardware: a100-80gb\nselect: [TCL4]\nframeworks: {torch_einsum: opt-einsum}\n"
    )
    toml_file = tmp_path / "pyproject.toml"
    toml_file.write_text(
        "[tool.tensorcost]\ndims = {batch = 8}\nhardware = 'a100-80gb'\nselect = ['TCL4']\n"
        "[tool.tensorcost.budgets]\nquadratic_bytes = '1GiB'\nintermediate_bytes = '1.5GB'\nlatency_seconds = 0.01\n"
        "[tool.tensorcost.frameworks]\ntorch_einsum = 'opt-einsum'\n"
    )
    a, b = load_config_file(yaml_file), load_config_file(toml_file)
    for config in (a, b):
        assert config.dims == {"batch": 8}
        assert config.budgets.quadratic_bytes == 2**30
        assert config.budgets.intermediate_bytes == 1_500_000_000
        assert config.budgets.latency_seconds == Decimal("0.01")
        assert config.hardware.device == "NVIDIA A100 80GB SXM"
        assert config.select == ("TCL4",) and config.torch_einsum == "opt-einsum"


def test_toml_errors_name_the_table(tmp_path: Path):
    toml_file = tmp_path / "pyproject.toml"
    toml_file.write_text("[tool.tensorcost]\ndims = {seq = 0}\n")
    with pytest.raises(ConfigError, match=r"pyproject.toml \[tool.tensorcost\]: dims.seq: must be positive"):
        load_config_file(toml_file)


def test_evidence_paths_resolve_relative_to_the_config_file(tmp_path: Path, monkeypatch):
    (tmp_path / "hw").mkdir()
    (tmp_path / "hw" / "lab.yaml").write_text(
        "devices:\n  - id: lab-gpu\n    device: Lab GPU\n    source: measured by tensorcost calibrate\n"
        "    measured: 2026-11-01\n    owner: perf\n    compute: []\n"
        "    bandwidth: [{traffic_boundary: hbm-to-compute, sustained_bytes_per_second: 1e12}]\n"
    )
    (tmp_path / "tensorcost.yaml").write_text("evidence: [hw/lab.yaml]\nhardware: lab-gpu\n")
    monkeypatch.chdir("/")
    config = load_config_file(tmp_path / "tensorcost.yaml")
    assert config.hardware.device == "Lab GPU"


def test_overrides_apply_on_top_of_the_file(tmp_path: Path):
    (tmp_path / "tensorcost.yaml").write_text("dims: {seq: 1024}\nignore: [TCL502]\n")
    resolver = ConfigResolver(Overrides(config_file=str(tmp_path / "tensorcost.yaml"), dims=(("seq", 4096),),
                                        hardware="h200", ignore=("TCL403",)))
    config = resolver.for_path("anything.py")
    assert config.dims == {"seq": 1024} and config.cli_dims == {"seq": 4096}
    assert config.hardware_id == "h200" and config.ignore == ("TCL502", "TCL403")


@pytest.mark.parametrize(
    "text,value",
    [(268435456, 268435456), ("256MiB", 256 * 2**20), ("1GiB", 2**30), ("1.5GB", 1_500_000_000),
     ("512 kB", 512_000), ("2TiB", 2 * 2**40), ("8_192", 8192), ("1.5GiB", 1610612736)],
)
def test_byte_sizes(text, value):
    assert parse_byte_size(text) == value


@pytest.mark.parametrize("text", ["", "MiB", "1.3B", "-1GiB", "1e9", "12 parsecs", True, 0, 2**64, 1.5])
def test_bad_byte_sizes(text):
    with pytest.raises(ValueError):
        parse_byte_size(text)
