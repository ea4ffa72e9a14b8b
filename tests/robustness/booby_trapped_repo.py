"""A repository whose every file would leave a sentinel file behind if any of it ran: module code,
package `__init__`, conftest.py, setup.py, decorators, default arguments, class bodies, annotation
strings that execute if eval'd (as jaxtyping's own symbolic dims would be), f-string dims, and
modules that shadow our own dependencies (yaml.py, libcst.py, estimator.py) if the current
directory were on sys.path.

Each trap names its own sentinel, so a failure says which one went off.
"""

from __future__ import annotations

from pathlib import Path

CONFIG = "dims: {batch: 2, seq: 16, d: 8}\nsequence_dims: [seq]\nbudgets: {quadratic_bytes: 1}\n"


def _touch(sentinels: Path, name: str) -> str:
    """Python that creates sentinels/name without needing any import statement."""
    return f"__import__('pathlib').Path({str(sentinels / name)!r}).touch()"


def build(repo: Path, sentinels: Path) -> list[Path]:
    """Write the trapped repository; return the Python files in it (the ones to lint)."""
    sentinels.mkdir(parents=True, exist_ok=True)
    (repo / ".git").mkdir(parents=True, exist_ok=True)
    (repo / "tensorcost.yaml").write_text(CONFIG)
    t = lambda name: _touch(sentinels, name)  # noqa: E731 - reads better in the templates below
    files = {
        "pkg/__init__.py": f"{t('package_init')}\n",
        "conftest.py": f"{t('conftest')}\n",
        "setup.py": f"{t('setup_py')}\nfrom setuptools import setup\nsetup(name='trap')\n",
        "yaml.py": f"{t('shadow_yaml')}\n",
        "libcst.py": f"{t('shadow_libcst')}\n",
        "estimator.py": f"{t('shadow_estimator')}\n",
        "sitecustomize.py": f"{t('sitecustomize')}\n",
        "pkg/model.py": f'''# tensorcost: dims seq=16
"""A model whose import, definition or annotation evaluation would run code."""
import torch
from torch import Tensor
from jaxtyping import Float

{t('module_level')}


def trap(fn):
    {t('decorator')}
    return fn


Evil = Float[Tensor, "__import__('pathlib').Path({str(sentinels / 'alias_eval')!r}).touch() seq"]


@trap
def attention(
    q: Float[Tensor, "batch seq d"],
    k: Float[Tensor, "batch seq d"],
    scale=__import__('pathlib').Path({str(sentinels / 'default_argument')!r}).touch(),
    e: Float[Tensor, "__import__('os').system('touch {sentinels / 'annotation_system'}')"] = None,
    f: "Float[Tensor, __import__('pathlib').Path({str(sentinels / 'string_annotation')!r}).touch()]" = None,
) -> Evil:
    scores = q @ k.transpose(-2, -1)  # (batch, seq, seq)
    width = f"{{{t('fstring_dim')}}}"
    return scores.view(batch, seq, width)


class Block(torch.nn.Module):
    {t('class_body')}

    def forward(self, x: Float[Tensor, "batch seq d"], w: Float[Tensor, "d {{{t('brace_dim')}}}"]):
        return x @ w  # shape: (batch, seq, __import__('os').system('touch {sentinels / 'shape_comment'}'))
''',
    }
    written = []
    for relative, text in files.items():
        path = repo / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    return written


def fired(sentinels: Path) -> list[str]:
    return sorted(p.name for p in sentinels.iterdir())
