"""Typed parse refusals that carry their own position.

The lint layer turns a ShapeError into TCL001 at the exact column, so every refusal says *where*
inside the text that was parsed (0-based character offset) and how many characters it covers.
Errors are raised, never printed: the caller decides how to report them.
"""

from __future__ import annotations


class ShapeError(ValueError):
    """A shape string, shape comment, pragma, einops pattern or dimension that cannot be used."""

    def __init__(self, message: str, offset: int | None = None, length: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.length = max(1, length)

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, offset={self.offset}, length={self.length})"

    def shifted(self, delta: int) -> ShapeError:
        """The same refusal with its offset moved by `delta` (text parsed inside a larger text)."""
        if self.offset is None:
            return self
        return type(self)(self.message, self.offset + delta, self.length)


class UnsupportedShape(ShapeError):
    """Valid for the annotation library, but not evaluable without running code.

    `{self.x}` f-string dims, calls such as `min(a,b)`, attribute access: we refuse to guess them,
    and the lint layer may choose to stay silent rather than report TCL001.
    """
