"""`work_budget:` — how much one whole-model run may do (issue 22: hostile model code).

A repository can hold code whose faithful interpretation never ends in practice: a call tree that
doubles per level, a forward of 100,000 statements, a module tree of 2**16 objects. The budget
bounds a run; when a part of it is spent, the run stops where it is, says what was cut and where
(a `not_followed` record), and its total is partial — never a crash, never a silent cut.
"""

from __future__ import annotations

from dataclasses import dataclass

from .fields import MappingReader


@dataclass(frozen=True)
class WorkLimits:
    # Statements interpreted (each loop body and each distinct call counts its statements once; about
    # 0.1-0.2 ms each): GPT-2 small, transformers' Llama/Mistral/Qwen2/BERT/GPT-2 and x-transformers
    # take at most 1,463 (measured on the test suite's models), so 50,000 is a wide margin.
    steps: int = 50_000
    # Distinct (function, argument facts) analyses: each is one summary, reused by every call that
    # repeats it; the same models need at most 175.
    contexts: int = 5_000
    # Entries walked to place allocations in order for the retained bytes (calls replayed in full).
    entries: int = 1_000_000


_KEYS = ("steps", "contexts", "entries")
_MAX = 10**12  # far past any machine's patience; keeps every product of counts exact and small


def parse_work_limits(reader: MappingReader) -> WorkLimits:
    budget = reader.mapping("work_budget")
    if budget is None:
        return WorkLimits()
    budget.allow_only(_KEYS)
    values = {}
    for key in _KEYS:
        value = budget.integer(key)
        if value is not None:
            if value > _MAX:
                raise budget.error(key, f"must be at most {_MAX}")
            values[key] = value
    budget.finish()
    return WorkLimits(**values)
