"""The cheaper LibCST parse and child listing give LibCST's own trees and children, and the speedups
leave what the plugin and `check` report unchanged."""

from __future__ import annotations

import threading
from pathlib import Path

import libcst as cst
from libcst._nodes.base import CSTNode

from tensorcost_lint.analysis.cst_parse import child_nodes, parse_module

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([*ROOT.glob("examples/*.py"), *ROOT.glob("tests/adapters/models/*.py"),
                  *ROOT.glob("tests/fixtures/lint/*.py")])


def _nodes(module):
    pending = [module]
    while pending:
        node = pending.pop()
        yield node
        pending.extend(node.children)


def test_parse_without_node_checks_builds_libcsts_own_tree():
    assert len(SOURCES) >= 10
    for path in SOURCES:
        text = path.read_text()
        fast = parse_module(text)
        assert fast.deep_equals(cst.parse_module(text)), path
        assert fast.code == text


def test_node_checks_are_back_after_the_parse_even_when_it_fails():
    before = CSTNode.__post_init__
    try:
        parse_module("def broken(:\n")
    except cst.ParserSyntaxError:
        pass
    assert CSTNode.__post_init__ is before
    try:  # the checks still refuse a tree built by hand
        cst.Name("not a name")
    except cst.CSTValidationError:
        pass
    else:
        raise AssertionError("LibCST's node checks are off after a parse")


def test_concurrent_parses_leave_the_checks_on():
    text = (ROOT / "examples" / "gpt_block.py").read_text()
    threads = [threading.Thread(target=lambda: [parse_module(text) for _ in range(3)]) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        cst.Name("")
    except cst.CSTValidationError:
        return
    raise AssertionError("LibCST's node checks are off after concurrent parses")


def test_child_nodes_lists_libcsts_children_in_order():
    seen_types = set()
    for path in SOURCES:
        for node in _nodes(parse_module(path.read_text())):
            expected = node.children
            got = child_nodes(node)
            assert len(got) == len(expected) and all(a is b for a, b in zip(got, expected)), type(node).__name__
            seen_types.add(type(node).__name__)
    # the conditional expression lists body, test, orelse: not its fields' order (test, body, orelse)
    expression = cst.parse_expression("f(a) if g(b) else h(c)")
    assert [c.func.value for c in child_nodes(expression) if isinstance(c, cst.Call)] == ["f", "g", "h"]
    assert [c.func.value for c in child_nodes(expression) if isinstance(c, cst.Call)] == ["f", "g", "h"]  # learnt order
    assert {"Call", "BinaryOperation", "FunctionDef", "Subscript", "Attribute"} <= seen_types
