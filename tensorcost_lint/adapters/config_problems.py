"""What a host linter shows when the user's tensorcost config is broken.

The CLI exits 2 with one line. flake8 and editors cannot: a plugin that raises takes down the
whole flake8 run, and a language server that exits leaves the editor silent. So each checked file
gets one finding at 1:1 that names the file, key and reason, and no other tensorcost finding.
TCL900 is the code the host already treats as "tensorcost could not analyse this file".
"""

from __future__ import annotations

from ..findings import Finding

CONFIG_ERROR_CODE = "TCL900"


def config_error_message(error) -> str:
    return f"tensorcost config error: {error}; no tensorcost check ran"


def config_error_finding(path: str, error) -> Finding:
    return Finding(path, 1, 1, CONFIG_ERROR_CODE, "error", config_error_message(error))
