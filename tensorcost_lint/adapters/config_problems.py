"""What a host linter shows when the user's tensorcost config is broken.

The CLI exits 2 with one line. flake8 and editors cannot: a plugin that raises takes down the
whole flake8 run, and a language server that exits leaves the editor silent. So each checked file
gets one finding at 1:1 that names the file, key and reason, and no other tensorcost finding.
TCL900 is the code the host already treats as "tensorcost could not analyse this file".
"""

from __future__ import annotations

from ..config.errors import ConfigError
from ..rules.findings import Finding

CONFIG_ERROR_CODE = "TCL900"


def config_error_message(error: Exception) -> str:
    if isinstance(error, ConfigError):
        return f"tensorcost config error: {error}; no tensorcost check ran"
    return (f"internal error while loading the tensorcost config: {type(error).__name__}: {error}; "
            "no tensorcost check ran; please report it")


def resolve_config(resolve, path: str):
    """(config, None), or (None, the one finding that says why there is no config)."""
    try:
        return resolve(path), None
    except Exception as error:  # noqa: BLE001 - the host linter must never crash on our account
        return None, Finding(path, 1, 1, CONFIG_ERROR_CODE, "error", " ".join(config_error_message(error).split()))
