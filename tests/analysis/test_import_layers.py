"""Imports flow one way. No import cycle anywhere in estimator/, shape_annotations/ or
tensorcost_lint/ — counting imports made inside functions, which hide cycles rather than break them.
Across tensorcost_lint every module imports only its own floor or the floors below (PACKAGE_FLOORS:
safe io → settings → analysis → costing → whole-model run → … → front ends), and inside the
analysis the same holds for values/facts → transfer tables → sites → flow. And no module is over
MAX_MODULE_LINES lines: a file that grows past that is asking to be split by concern (STYLE.md)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("estimator", "shape_annotations", "tensorcost_lint")
MAX_MODULE_LINES = 400
FLOORS = {
    "values": ("site_registry", "facts", "dtype_rules", "shape_ops", "literals", "problems", "imports", "call_site",
               "interpreter", "context", "annotations", "units", "cst_parse", "identifiers", "ast_positions",
               "ast_expressions", "source_parse",
               "ast_front", "given_values"),
    "transfer tables": ("arguments", "pointwise_ops", "selection_ops", "tensor_methods", "tensor_functions", "indexing", "contracts", "convolutions", "module_shapes", "functional_ops", "complex_views", "linear_solves", "window_pooling", "unfolding", "einops_packing", "einx_ops",
                        "op_entry", "op_table_layout", "op_table_maths", "op_table_selection", "op_table_layers",
                        "op_table"),
    "sites": ("site_shapes", "call_sites", "multihead_attention", "calls"),
    "flow": ("evaluator", "function_flow", "file_analysis"),
}

# The floors of tensorcost_lint, lowest first, as packages or modules under it (the longest prefix
# names a module's floor). Data flows up: files are read safely, settings parsed, source analysed
# into call sites, sites costed, whole models interpreted; rules word findings over all of those;
# the whole-model report words refusals in the rules' terms; formats and the driver run the rules
# over files; the check integration runs models inside `check`; front ends sit on top.
PACKAGE_FLOORS = {
    "safe io": ("safe_io", "findings"),  # and the Finding record every floor above may carry
    "settings": ("config", "hardware"),
    "analysis": ("analysis",),
    "costing": ("costing",),
    "whole-model run": ("whole_model",),
    "baseline documents": ("baseline",),
    "rules": ("rules",),
    "project config": ("config.project_config", "config.per_file_ignores", "config.config_discovery"),
    "whole-model report": ("whole_model.report",),
    "formats and driver": ("formats", "driver"),
    "check integration": ("model_check", "cost_gate"),
    "front ends": ("cli", "adapters", "reporting", "measurement", "reference"),
}

# Inside the whole-model run, lowest first: the value model and the records a run makes; reading
# source (the files, classes and bindings of a model's tree); Python's semantics (builtins, stdlib,
# classes, containers); the library's (torch, nn, autograd); memory and storage; the evaluator that
# runs a model over all of those. Its report sits above the rules (PACKAGE_FLOORS).
WHOLE_MODEL_FLOORS = ("values", "source", "python", "library", "memory", "run")


def _package_floor(module: str) -> int | None:
    """The index of `module`'s floor in PACKAGE_FLOORS (the package root's `__version__` is the
    lowest); None for a module of tensorcost_lint no floor names."""
    if module == "tensorcost_lint":
        return 0
    relative = module.removeprefix("tensorcost_lint.")
    named = [(len(prefix), index) for index, prefixes in enumerate(PACKAGE_FLOORS.values())
             for prefix in prefixes if relative == prefix or relative.startswith(prefix + ".")]
    return max(named)[1] if named else None


def _modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _imports(name: str, path: Path, modules) -> set[str]:
    """Every project module `name` imports, at any depth of its tree (function bodies included)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = (package[: len(package) - node.level + 1] if node.level else [])
            prefix = ".".join(base + ([node.module] if node.module else []))
            targets = [f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in modules else prefix
                       for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _graph():
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _cycle(graph) -> list[str] | None:
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return stack[stack.index(target):] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_cycle_including_function_level_imports():
    graph = _graph()
    assert len(graph) > 100
    assert _cycle(graph) is None, " → ".join(_cycle(graph))


def test_the_cycle_finder_sees_function_level_imports(tmp_path):
    graph = {"a": {"b"}, "b": set()}
    assert _cycle(graph) is None
    graph["b"].add("a")  # what a `from .a import x` inside a function of b adds
    assert _cycle(graph) == ["a", "b", "a"]


def test_cost_model_packages_know_nothing_of_libcst_or_the_lint_layer():
    for name, path in _modules().items():
        if name.startswith(("estimator", "shape_annotations")):
            text = path.read_text(encoding="utf-8")
            assert "libcst" not in text and "tensorcost_lint" not in _imports(name, path, _modules()), name


def _floor_violations(graph) -> list[str]:
    found = []
    for name in sorted(graph):
        if not name.startswith("tensorcost_lint"):
            continue
        mine = _package_floor(name)
        if mine is None:
            found.append(f"{name} has no floor: add its package to PACKAGE_FLOORS")
            continue
        for target in sorted(graph[name]):
            theirs = _package_floor(target) if target.startswith("tensorcost_lint") else None
            if theirs is not None and theirs > mine:
                floors = list(PACKAGE_FLOORS)
                found.append(f"{name} ({floors[mine]}) imports {target} ({floors[theirs]})")
    return found


def test_every_module_imports_only_its_package_floor_or_below():
    assert _floor_violations(_graph()) == []


def test_the_package_floors_see_an_import_upwards():
    graph = {"tensorcost_lint.safe_io.files": {"tensorcost_lint.rules.base"},
             "tensorcost_lint.whole_model.report.totals": {"tensorcost_lint.rules"},
             "tensorcost_lint.whole_model.memory.storage": {"tensorcost_lint.whole_model.report.totals"},
             "tensorcost_lint.newpackage.thing": set()}
    assert _floor_violations(graph) == [
        "tensorcost_lint.newpackage.thing has no floor: add its package to PACKAGE_FLOORS",
        "tensorcost_lint.safe_io.files (safe io) imports tensorcost_lint.rules.base (rules)",
        "tensorcost_lint.whole_model.memory.storage (whole-model run) imports tensorcost_lint.whole_model.report.totals "
        "(whole-model report)"]


def test_whole_model_modules_import_only_their_floor_or_below():
    prefix = "tensorcost_lint.whole_model."
    inside = {name for name in _modules() if name.startswith(prefix) and not name.startswith(prefix + "report")}
    floor_of = {name: WHOLE_MODEL_FLOORS.index(name[len(prefix):].split(".")[0]) for name in inside
                if name[len(prefix):].split(".")[0] in WHOLE_MODEL_FLOORS}
    assert inside - {prefix.rstrip(".")} == set(floor_of), "give each whole-model module a floor (a subpackage)"
    graph = _graph()
    for name in sorted(floor_of):
        for target in sorted(graph[name]):
            if target in floor_of:
                assert floor_of[target] <= floor_of[name], \
                    f"{name} ({WHOLE_MODEL_FLOORS[floor_of[name]]}) imports {target} ({WHOLE_MODEL_FLOORS[floor_of[target]]})"


def test_analysis_modules_import_only_their_floor_or_below():
    floor_of = {f"tensorcost_lint.analysis.{m}": index for index, modules in enumerate(FLOORS.values()) for m in modules}
    analysis = {name for name in _modules() if name.startswith("tensorcost_lint.analysis.")}
    assert analysis == set(floor_of), "give each analysis module a floor"
    graph = _graph()
    for name in analysis:
        for target in graph[name]:
            if target in floor_of:
                assert floor_of[target] <= floor_of[name], f"{name} (floor {floor_of[name]}) imports {target} (floor {floor_of[target]})"
            assert not target.startswith("tensorcost_lint.") or target.startswith("tensorcost_lint.analysis") \
                or target == "tensorcost_lint.safe_io.source_lines", f"{name} reaches up to {target}"


def _too_long(paths) -> list[str]:
    """`path: N lines` for each file over MAX_MODULE_LINES, lines counted as `wc -l` counts them."""
    found = []
    for path in paths:
        lines = path.read_bytes().count(b"\n")
        if lines > MAX_MODULE_LINES:
            found.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {lines} lines")
    return found


def test_no_module_is_over_the_line_limit():
    modules = _modules()
    assert len(modules) > 100
    assert _too_long(sorted(modules.values())) == [], f"split by concern, each at most {MAX_MODULE_LINES} lines"


def test_the_line_limit_sees_a_long_module(tmp_path):
    short, long = tmp_path / "short.py", tmp_path / "long.py"
    short.write_text("x = 1\n" * MAX_MODULE_LINES)
    long.write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    assert _too_long([short, long]) == [f"{long}: {MAX_MODULE_LINES + 1} lines"]
