"""`'silu' in dir(torch.nn.functional)`: a feature check on a torch module, read without importing
torch. `dir(M)` of a torch module is the names it holds; the run knows a name is there when one of
its tables has an entry under it (the op table's functions, the call sites' functions; every
torch name there is one torch has: tests/whole_model/test_torch_namespaces.py), so the check is
True for those. A name no table holds may still be in torch (or not): the
check is undecided, never False."""

from __future__ import annotations

from dataclasses import dataclass

from ...analysis import op_table
from ...analysis.interpreter import UNHANDLED
from ...analysis.site_registry import FUNCTIONS as SITE_FUNCTIONS


@dataclass(frozen=True)
class TorchNames:
    """`dir(torch.nn.functional)`: the names of a torch module (canonical dotted name)."""

    module: str

    def holds(self, name: str):
        """True when the run's tables know `module.name`; None (unknown) otherwise."""
        return True if _known_name(f"{self.module}.{name}") else None


def dir_of(interp, args):
    """`dir(torch.nn.functional)`, `dir(F)` of a torch module as imported; UNHANDLED for anything
    else (nothing is evaluated: a module's name records no site)."""
    if args.keywords or args.starred or len(args.positional) != 1:
        return UNHANDLED
    name = interp.ctx.settings.imports.resolve(args.positional[0])
    if name is None or not _is_torch_module(name):
        return UNHANDLED
    return TorchNames(name)


def _is_torch_module(name: str) -> bool:
    return (name == "torch" or name.startswith("torch.")) and not _known_name(name) \
        and any(known.startswith(name + ".") for known in _names())


def _known_name(name: str) -> bool:
    return name in _names()


_NAMES: set = set()


def _names() -> set:
    if not _NAMES:
        _NAMES.update(name for name in (*op_table.FUNCTIONS, *SITE_FUNCTIONS) if name.startswith("torch."))
    return _NAMES
