"""The one error of a whole-model run that stops it: an entry whose source cannot be read. Raised
wherever the run reads source — the file index (source_tree.py), a definition parsed when first
reached (lazy_definitions.py), the entry's build expression, the decode step, the `in` check — and
turned into one line and exit 2 by the CLI. In a module of its own so that none of those readers
imports another just to raise or catch it."""

from __future__ import annotations


class SourceError(Exception):
    """An entry that cannot be read: one line naming the file and the reason (exit 2)."""


class StackExhausted(SourceError):
    """A definition LibCST could not parse because Python's stack ran out (RecursionError): code
    nested deeply, or a definition first read many calls deep in the run; a call the run makes
    lists it at that call instead of failing the model."""
