"""Every dim a codebase names, for `tensorcost init`: read statically, never executed.

Three sources, as the analysis reads them: jaxtyping / torchtyping annotations (parsed with
`shape_annotations`' grammar), shape comments (`# (B, nh, T, hs)`), and `config.x` attributes
passed where a size goes — module and tensor constructors, view/reshape and friends — which the
analysis reads as the dim `x`. Built on the stdlib `ast` (a starter config needs names and
places, not LibCST's positions). Bounded: files go through the same capped reader as `check`.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass, field

from shape_annotations import DTYPE_CLASSES, ShapeError, Variadic, free_names, parse_shape_comment, parse_shape_string

from ..analysis.evaluator import CONFIG_NAMES
from ..safe_io.files import UnreadableFile, discover, read_source

# Calls whose arguments are sizes: a `config.x` there is a dim.
SIZE_CALLS = frozenset({
    "Linear", "Embedding", "EmbeddingBag", "LayerNorm", "RMSNorm", "GroupNorm", "Conv1d", "Conv2d", "Conv3d",
    "MultiheadAttention", "Parameter", "empty", "zeros", "ones", "randn", "rand", "full", "arange", "eye", "tril",
    "triu", "view", "reshape", "expand", "split", "repeat", "broadcast_to", "unflatten", "new_zeros", "new_empty",
    "new_ones", "new_full", "normal", "truncated_normal", "uniform", "Dense", "DenseGeneral",
})
# Keywords of those calls that take a size (`bias=config.bias`, `eps=config.eps` are no dims).
SIZE_KEYWORDS = frozenset({
    "in_features", "out_features", "num_embeddings", "embedding_dim", "normalized_shape", "size", "shape",
    "embed_dim", "num_heads", "kdim", "vdim", "in_channels", "out_channels", "num_channels", "num_groups",
    "features", "hidden_size", "dim", "sections", "split_size_or_sections", "n", "m", "end",
})
ANNOTATION_TYPES = frozenset(DTYPE_CLASSES) | {"TensorType"}


@dataclass
class DimUse:
    count: int = 0
    first: str = ""  # "path:line (kind)" of the first use, for the comment in the config
    kinds: set = field(default_factory=set)


@dataclass
class Census:
    files: int = 0
    dims: dict = field(default_factory=dict)  # name -> DimUse, in first-seen order

    def note(self, name: str, path: str, line: int, kind: str) -> None:
        use = self.dims.setdefault(name, DimUse())
        use.count += 1
        use.kinds.add(kind)
        if not use.first:
            use.first = f"{path}:{line}"


def _last_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _config_attribute(node: ast.AST) -> str | None:
    """`config.x`, `cfg.x`, `self.cfg.x` -> `x`."""
    if not isinstance(node, ast.Attribute):
        return None
    receiver = node.value
    if isinstance(receiver, ast.Name) and receiver.id in CONFIG_NAMES:
        return node.attr
    if isinstance(receiver, ast.Attribute) and receiver.attr in CONFIG_NAMES and isinstance(receiver.value, ast.Name):
        return node.attr
    return None


def _shape_string_dims(text: str) -> list[str]:
    try:
        parsed = parse_shape_string(text)
    except (ShapeError, ValueError):
        return []
    names: list[str] = []
    for dim in parsed.dims:
        if type(dim) is Variadic:
            names.extend([dim.name] if dim.name else [])
        else:
            names.extend(sorted(free_names(dim.expr)))
    return names


def _annotation_dims(node: ast.Subscript) -> list[str]:
    kind = _last_name(node.value)
    if kind not in ANNOTATION_TYPES:
        return []
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    strings = [item.value for item in items if isinstance(item, ast.Constant) and isinstance(item.value, str)]
    if kind == "TensorType":  # torchtyping: one name per string
        return [s for s in strings if s.isidentifier()]
    return _shape_string_dims(strings[0]) if len(items) >= 2 and strings and items[1] is not None else []


def _comment_dims(text: str) -> list[tuple[int, list[str]]]:
    found = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type != tokenize.COMMENT:
                continue
            try:
                shape = parse_shape_comment(token.string)
            except (ShapeError, ValueError):
                continue
            if shape is None:
                continue
            names: list[str] = []
            for dims in (*shape.operands, shape.dims):
                for dim in dims:
                    names.extend(n for n in sorted(free_names(dim)) if n not in names)
            found.append((token.start[0], names))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return found


def census_of_text(census: Census, text: str, path: str) -> None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    census.files += 1
    for line, names in _comment_dims(text):
        for name in names:
            census.note(name, path, line, "shape comment")
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            for name in _annotation_dims(node):
                census.note(name, path, node.lineno, "annotation")
        elif isinstance(node, ast.Call) and _last_name(node.func) in SIZE_CALLS:
            for argument in (*node.args, *(k.value for k in node.keywords if k.arg in SIZE_KEYWORDS)):
                for inner in ast.walk(argument):
                    name = _config_attribute(inner)
                    if name is not None:
                        census.note(name, path, inner.lineno, "config attribute")


def dim_census(paths) -> Census:
    files, _ = discover(paths, lambda path: ())
    census = Census()
    for path in files:
        try:
            text = read_source(path)
        except UnreadableFile:
            continue
        census_of_text(census, text, path)
    return census
