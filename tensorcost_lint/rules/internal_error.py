"""TCL900: the analysis itself failed on this file; reported, never raised into the host linter."""

from __future__ import annotations

from ..analysis.problems import UnitNotParsed
from .base import Rule


class InternalError(Rule):
    code = "TCL900"
    name = "internal-error"
    summary = "internal error while analysing this file (the host linter never crashes)"
    severity = "error"
    what_it_does = (
        "Reports that tensorcost failed while analysing a file — an unexpected exception, or a file too deeply "
        "nested to walk — instead of crashing flake8, pre-commit or the editor."
    )
    why_bad = "The file was not analysed: its findings and costs are missing. Please report it with the message."
    example = "(any file that triggers a bug in tensorcost)"
    use_instead = "Report the message at the project's issue tracker; `# noqa: TCL900` silences it meanwhile."
    facts = (UnitNotParsed,)  # an analysis failure confined to one unit (the rest of the file was analysed)

    def message(self, fact, sizes) -> str:
        return f"internal error: LibCST cannot parse lines {fact.start}-{fact.end} ({fact.detail}); not analysed"
