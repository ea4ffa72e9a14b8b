"""Contract 7a: where an absolute import is looked for beyond the importer's own package —
`source_roots`, then the site folders `site_packages` opts into — and why one is not followed.

Packages whose API the analysis models with its own tables (torch's ops and layers, numpy, jax,
einops) are never read as source: their Python implementation is not what a model's cost is
counted from, and reading torch's 2,000 files would only cost time."""

from __future__ import annotations

import sys

MODELLED_PACKAGES = frozenset({"torch", "numpy", "jax", "jaxlib", "einops", "opt_einsum", "ml_dtypes",
                               "triton", "flax"})
_STANDARD_LIBRARY = frozenset(getattr(sys, "stdlib_module_names", ())) | {"__future__"}


def import_roots(config) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(source_roots, site folders) of a project config (none for a config without the keys)."""
    return tuple(getattr(config, "source_roots", ())), tuple(getattr(config, "site_folders", ()))


def searched_in_site(top: str) -> bool:
    """Whether an import of the top-level package `top` may be read from a site folder."""
    return top not in MODELLED_PACKAGES and top not in _STANDARD_LIBRARY


def not_found_reason(module: str, setting: str) -> str | None:
    """The one reason line for `from module import x` whose package no root holds, or None where
    not finding it is expected (the standard library, a package the analysis models by table)."""
    top = module.split(".")[0]
    if not searched_in_site(top):
        return None
    if setting == "none":
        return (f"package `{top}` is not in the analysed tree or `source_roots` (installed packages are "
                "read only with `site_packages`)")
    return f"package `{top}` not found in the analysed tree, `source_roots` or the site folders (site_packages: {setting})"


def why_attribute_unknown(run, self_fact, name: str) -> str | None:
    """Why `self.<name>` is unknown when the object's constructor set it from a call of an import
    that could not be followed (`self.ffn = SwiGLU(dim)` with `from layerkit.layers import SwiGLU`
    and no `site_packages`): that import's reason, said where the attribute is called."""
    import ast

    instance = run.instance(self_fact)
    cls = instance.source.classes.get(instance.class_name) if instance is not None else None
    init = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None) \
        if cls is not None else None
    for node in ast.walk(init) if init is not None else ():
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call) \
                and ast.unparse(node.targets[0]) == f"self.{name}":
            head = node.value.func
            while isinstance(head, ast.Attribute):
                head = head.value
            if isinstance(head, ast.Name):
                return run.tree.why_not_followed(instance.source, head.id)
    return None
