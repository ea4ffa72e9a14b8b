"""Where `tensorcost check` gets its text besides plain files: stdin (`-`), and the fix round
(`--fix`, `--diff`) that lints, edits and lints again."""

from __future__ import annotations

import sys

from ..config.errors import ConfigError
from ..safe_io.files import MAX_SOURCE_BYTES, UnreadableFile, decode_source, read_source
from ..driver.fixes import fix_text, unified_diff, write_atomically
from ..safe_io.bounded_read import read_capped
from ..driver.runner import Report, lint_text
from ..safe_io.source_lines import source_lines

STDIN_DISPLAY_NAME = "-"


class SourceLines:
    """The lines of each reported file, for `--show-source`: what was linted when known (stdin,
    fixed text), else read again from disk."""

    def __init__(self) -> None:
        self._texts: dict[str, list[str]] = {}

    def remember(self, path: str, text: str) -> None:
        self._texts[path] = source_lines(text)

    def lines(self, path: str) -> list[str]:
        if path not in self._texts:
            try:
                self._texts[path] = source_lines(read_source(path))
            except UnreadableFile:
                self._texts[path] = []
        return self._texts[path]


def read_stdin() -> str:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # a text stream without bytes underneath (tests, embedding)
        text = sys.stdin.read(MAX_SOURCE_BYTES + 1)
        raw = text.encode("utf-8", "surrogatepass")
    else:
        raw = stream.read(MAX_SOURCE_BYTES + 1)
    if len(raw) > MAX_SOURCE_BYTES:
        raise ConfigError(STDIN_DISPLAY_NAME, "", f"stdin holds more than {MAX_SOURCE_BYTES} bytes")
    try:
        return decode_source(raw)
    except UnreadableFile as error:
        raise ConfigError(STDIN_DISPLAY_NAME, "", str(error)) from None


def lint_stdin(stdin_filename: str | None, resolver) -> tuple[Report, str]:
    """One file from stdin, under the config and per-file ignores of `--stdin-filename`."""
    text = read_stdin()
    path = stdin_filename or STDIN_DISPLAY_NAME
    config = resolver.for_path(stdin_filename or ".")
    report = Report(files_checked=1)
    report.results = [lint_text(text, path, config)]
    return report, text


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


class FixRun:
    def __init__(self, resolver, sources: SourceLines) -> None:
        self.resolver = resolver
        self.sources = sources
        self.fixed_findings = 0
        self.fixed_files = 0

    def _fixable(self, report):
        return [result for result in report.results if any(f.fix is not None for f in result.findings)]

    def _outcome(self, path: str, text: str):
        return fix_text(text, path, self.resolver.for_path(path if path != STDIN_DISPLAY_NAME else "."))

    def diff(self, report) -> int:
        """Print every file's fixes as one unified diff; exit 1 when there is any."""
        changed = 0
        for result in self._fixable(report):
            outcome = self._outcome(result.path, read_source(result.path))
            if outcome.changed:
                sys.stdout.write(unified_diff(outcome))
                changed += 1
        sys.stdout.flush()
        return 1 if changed else 0

    def diff_stdin(self, report, text: str) -> int:
        outcome = self._outcome(report.results[0].path, text)
        if outcome.changed:
            sys.stdout.write(unified_diff(outcome))
            sys.stdout.flush()
        return 1 if outcome.changed else 0

    def fix(self, report) -> Report:
        """Apply and write every file's fixes; the report of what is left after re-linting."""
        for index, result in enumerate(report.results):
            if not any(f.fix is not None for f in result.findings):
                continue
            try:
                original_bytes = read_capped(result.path, MAX_SOURCE_BYTES)
                text = decode_source(original_bytes)
            except (OSError, UnreadableFile):
                continue  # it was read a moment ago; a file that vanished keeps its findings
            outcome = self._outcome(result.path, text)
            if not outcome.changed:
                continue
            write_atomically(result.path, outcome.fixed, original_bytes)
            self.sources.remember(result.path, outcome.fixed)
            report.results[index] = outcome.result
            self.fixed_findings += outcome.applied
            self.fixed_files += 1
        return report

    def summary(self) -> str:
        return f"Fixed {_plural(self.fixed_findings, 'finding')} in {_plural(self.fixed_files, 'file')}"
