"""Calls that reach the tree's code by other roads than a plain import (issue 22, defect 6): a module
imported at run time (`importlib.import_module`, `__import__`, `sys.modules`), a module re-exported by
a package, a top-level alias, a lambda called where it is written. Each is followed to its exact
count, or listed as not followed with why; none is dropped behind a complete-looking total."""

from __future__ import annotations

import json

import pytest

from tests.run_cli import run_tensorcost
from tests.whole_model.test_hostile_calls import ENTRY  # the same entry module, other imports and calls

MATMUL = 2 * 2 * 64 * 64  # one [B=2, 64] @ [64, 64]
FILES = {
    "c.py": "def helper(x, w):\n    return x @ w\n",
    "sub/__init__.py": "from .. import c\n",
    "e.py": "import importlib\nhelper = importlib.import_module('pkg.c').helper\n",
    "f.py": "import functools\nhelper = functools.lru_cache(None)\n",
}


def _model(tmp_path, imports: str, call: str) -> dict:
    (tmp_path / ".git").mkdir()
    (tmp_path / "tensorcost.yaml").write_text("dims: {B: 2}\n")
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "model.py").write_text(ENTRY.format(imports=imports, call=call))
    for name, text in FILES.items():
        (package / name).parent.mkdir(exist_ok=True)
        (package / name).write_text(text)
    ran = run_tensorcost("model", "--entry", "pkg/model.py:M.forward", "--input", "x=float32 B 64", "--format", "json",
                         cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)["models"][0]


@pytest.mark.parametrize("imports, call", [
    ("import importlib", "importlib.import_module('pkg.c').helper(x, self.w)"),
    ("import importlib", "importlib.import_module('.c', 'pkg').helper(x, self.w)"),
    ("import importlib", "importlib.import_module('.c', __package__).helper(x, self.w)"),
    ("import importlib\nc = importlib.import_module('pkg.c')", "c.helper(x, self.w)"),
    ("", "__import__('pkg.c', fromlist=['helper']).helper(x, self.w)"),
    ("", "__import__('pkg.c').c.helper(x, self.w)"),
    ("import sys\nfrom . import c", "sys.modules['pkg.c'].helper(x, self.w)"),
    ("from .sub import c", "c.helper(x, self.w)"),
    ("from .c import helper as _h\nhelper = _h", "helper(x, self.w)"),
    ("from .c import helper", "(lambda f: f(x, self.w))(helper)"),
    ("from .e import helper", "helper(x, self.w)"),
], ids=["import_module", "import_module-relative", "import_module-__package__", "import_module-global", "__import__",
        "__import__-package", "sys.modules", "re-exported-module", "top-level-alias", "lambda-called",
        "assigned-in-another-file"])
def test_a_call_reached_another_way_is_followed(tmp_path, imports, call):
    model = _model(tmp_path, imports, call)
    assert model["totals"]["flops"] == MATMUL, model
    assert model["complete"], model["not_followed"]


@pytest.mark.parametrize("imports, call, reason", [
    ("from .f import helper", "helper(x, self.w)", "bound at the top of f.py (line 2)"),
    ("import functools\nhelper = functools.lru_cache(None)", "helper(x, self.w)", "bound at the top of model.py"),
    ("import importlib", "importlib.import_module('pkg.nothere').helper(x, self.w)", "imported at run time"),
    ("import functools\nfrom .c import helper", "functools.reduce(lambda a, f: f(a, self.w), [helper], x)",
     "`functools.reduce` calls the code of the tree"),
], ids=["assigned-in-another-file", "assigned-here", "import_module-missing", "functools.reduce"])
def test_a_call_the_run_cannot_follow_is_listed(tmp_path, imports, call, reason):
    model = _model(tmp_path, imports, call)
    assert model["complete"] is False
    listed = [f"{n['expression']}: {n['reason']}" for n in model["not_followed"]]
    assert len(listed) == 1 and reason in listed[0], listed
