"""Bounds on the work any parser in this package does, whatever text it is handed.

Annotation text comes from arbitrary source files (and, through the language server, from every
keystroke), so each parser refuses oversized input up front instead of spending time on it.
"""

from __future__ import annotations

from estimator.counting import MAX_COUNT

from .errors import ShapeError

# A real shape string is a few dozen characters; 4 KiB leaves room for generated code.
MAX_TEXT_CHARS = 4096
# Nesting of a dimension expression (parentheses and operators); `d_model//n_heads` is depth 1.
MAX_DEPTH = 32
# No framework supports rank above 64 (numpy's limit is 64 since 2.0, torch's is lower).
MAX_DIMS = 64
# Sizes and counts are refused above the estimator's ceiling; downstream readers wrap past int64.
MAX_SIZE = MAX_COUNT


def check_text_size(text: str, what: str) -> None:
    """Refuse text over 4 KiB (characters, then UTF-8 bytes) before looking at it."""
    if len(text) > MAX_TEXT_CHARS or len(text.encode("utf-8", "surrogatepass")) > MAX_TEXT_CHARS:
        raise ShapeError(f"{what} is longer than {MAX_TEXT_CHARS} bytes; refused", 0, 1)
