"""Contract 7a `build:`: the Python expression that builds a model, checked once at config time.

The text is parsed (stdlib `ast`), never compiled or run; what it may contain is a call that builds
the model, with names, attribute chains, nested calls and literals of any type as its arguments.
A cloned repository's config is untrusted input, so its size is bounded before and after parsing.
"""

from __future__ import annotations

import ast

MAX_BUILD_CHARACTERS = 2000  # a constructor call with a few dozen keyword arguments is ~500
MAX_BUILD_NODES = 400  # syntax nodes after parsing: bounds the work of resolving and evaluating it
_LITERAL_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Pow, ast.Mod)
# every node a build expression may hold: a call tree over names and literals; anything else (a
# lambda, a comprehension, a subscript, a walrus) is code a config has no need to carry
_ALLOWED = (ast.Expression, ast.Call, ast.keyword, ast.Attribute, ast.Name, ast.Load, ast.Constant, ast.List,
            ast.Tuple, ast.Dict, ast.Set, ast.UnaryOp, ast.USub, ast.UAdd, ast.Not, ast.BinOp, *_LITERAL_OPERATORS)


def parse_build(text: str, error) -> ast.Call:
    """The call a `build:` text holds, or `error(reason)` raised: a syntax error, a statement, an
    expression that is not a call, a construct that is not a name, call or literal, too much text."""
    if len(text) > MAX_BUILD_CHARACTERS:
        raise error(f"the build expression has {len(text):,} characters (at most {MAX_BUILD_CHARACTERS:,})")
    if not text.strip():
        raise error("expected a Python call that builds the model, e.g. \"VisionTransformer(depth=4)\"")
    try:
        module = ast.parse(text.strip(), mode="exec")
    except SyntaxError as problem:
        raise error(f"invalid Python: {problem.msg} (column {problem.offset or 0})") from None
    except (RecursionError, MemoryError, ValueError):
        raise error("invalid Python: too deeply nested to parse") from None
    if len(module.body) != 1 or not isinstance(module.body[0], ast.Expr):
        kind = type(module.body[0]).__name__ if module.body else "nothing"
        raise error(f"expected one expression, got a statement ({kind}); write the call alone, "
                    "e.g. \"VisionTransformer(depth=4)\"")
    expression = module.body[0].value
    if not isinstance(expression, ast.Call):
        raise error(f"expected a call that builds the model, got {type(expression).__name__}")
    count = 0
    for node in ast.walk(expression):
        count += 1
        if count > MAX_BUILD_NODES:
            raise error(f"the build expression has more than {MAX_BUILD_NODES} syntax nodes (bounded work)")
        if not isinstance(node, _ALLOWED) and node is not expression:
            raise error(f"{type(node).__name__} is not allowed in a build expression (only calls, names, "
                        "attributes and literals)")
        if isinstance(node, ast.keyword) and node.arg is None:
            raise error("`**mapping` is not allowed in a build expression; give each keyword")
    return expression


def free_names(expression: ast.Call) -> list[str]:
    """The names the expression reads, in order of first use (each resolved in the tree later)."""
    return list(dict.fromkeys(node.id for node in ast.walk(expression) if isinstance(node, ast.Name)))
