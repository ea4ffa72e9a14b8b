"""Applying the fixes rules carry (`Finding.fix`), for `tensorcost check --fix` and `--diff`.

The same `Fix` records the language server offers as quick fixes: TCL403's `optimize="optimal"`
on an `np.einsum` and the cheapest parenthesisation of a matmul chain. Fixes are applied from the
end of the file backwards so earlier positions stay valid; one that overlaps an edit already made
waits for the next round, and each round re-lints the edited text, so every position used comes
from a lint of the exact text it edits. Files are replaced atomically (a temporary file in the
same directory, then `os.replace`): an interrupted run leaves the old file or the new one, never
half of each.
"""

from __future__ import annotations

import codecs
import difflib
import io
import tokenize
from dataclasses import dataclass

from ..safe_io.atomic_write import write_atomically as replace_file
from .engine import lint_source
from ..safe_io.source_lines import source_lines

MAX_ROUNDS = 8  # a fix never enables another forever; this bounds a pathological case


@dataclass
class FixOutcome:
    path: str
    original: str
    fixed: str
    applied: int  # number of fixes applied over all rounds
    result: object  # LintResult of the fixed text

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


def _offset(line_starts: list[int], line: int, column: int) -> int:
    return line_starts[line - 1] + column - 1


def apply_fixes(text: str, fixes) -> tuple[str, int]:
    """(text with every non-overlapping fix applied, how many were applied)."""
    lines = source_lines(text, keepends=True)
    starts, position = [], 0
    for line in lines:
        starts.append(position)
        position += len(line)
    starts.append(position)
    spans = []
    for fix in fixes:
        if not (1 <= fix.line <= len(lines) and 1 <= fix.end_line <= len(lines)):
            continue
        start, end = _offset(starts, fix.line, fix.column), _offset(starts, fix.end_line, fix.end_column)
        if 0 <= start <= end <= len(text):
            spans.append((start, end, fix.replacement))
    applied, limit = 0, len(text) + 1
    for start, end, replacement in sorted(set(spans), reverse=True):
        if end > limit or (end == limit and start == end and applied):
            continue  # overlaps an edit made this round: the next round's lint decides
        text = text[:start] + replacement + text[end:]
        limit, applied = start, applied + 1
    return text, applied


def fix_text(text: str, path: str, config) -> FixOutcome:
    """Lint, apply, re-lint until nothing fixable is left (or MAX_ROUNDS)."""
    original, applied = text, 0
    result = lint_source(text, path, config)
    for _ in range(MAX_ROUNDS):
        fixes = [finding.fix for finding in result.findings if finding.fix is not None]
        if not fixes:
            break
        text, count = apply_fixes(text, fixes)
        if count == 0:
            break
        applied += count
        result = lint_source(text, path, config)
    return FixOutcome(path, original, text, applied, result)


def unified_diff(outcome: FixOutcome) -> str:
    return "".join(difflib.unified_diff(
        source_lines(outcome.original, keepends=True), source_lines(outcome.fixed, keepends=True),
        fromfile=f"a/{outcome.path}", tofile=f"b/{outcome.path}"))


def _encoding_of(raw: bytes) -> str:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError:
        encoding = "utf-8"
    return encoding


def write_atomically(path: str, text: str, original_bytes: bytes) -> None:
    """Replace `path` with `text` in the file's own encoding (BOM kept), mode kept."""
    encoding = _encoding_of(original_bytes)
    data = text.encode("utf-8" if encoding == "utf-8-sig" else encoding)
    if original_bytes.startswith(codecs.BOM_UTF8):
        data = codecs.BOM_UTF8 + data
    replace_file(path, data)  # mode kept, temporary file removed on any failure
