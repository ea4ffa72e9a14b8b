"""The optional libraries measurement and plotting need, imported only when a command runs.

A missing one is a usage error (one line, exit 2) that names what to install, never a traceback:
`tensorcost check` users never installed numpy, and should not learn that from a stack trace.
"""

from __future__ import annotations

import importlib

from ..config.errors import ConfigError

# library -> what to install for it
INSTALL_HINTS = {
    # The packages themselves, not `pip install 'tensorcost-lint[measure]'`: no release is on the
    # package index yet, so an extra by name would not resolve there.
    "numpy": "pip install numpy opt_einsum (tensorcost-lint's `measure` extra)",
    "opt_einsum": "pip install numpy opt_einsum (tensorcost-lint's `measure` extra)",
    "torch": "pip install torch (see pytorch.org for a CUDA build)",
    "jax": "pip install jax",
    "matplotlib": "pip install matplotlib (tensorcost-lint's `plot` extra)",
}


def require(library: str, command: str, why: str = ""):
    """Import `library` or raise a ConfigError naming the extra that provides it."""
    try:
        return importlib.import_module(library)
    except ImportError:
        hint = INSTALL_HINTS.get(library, f"pip install {library}")
        purpose = f" ({why})" if why else ""
        raise ConfigError(f"tensorcost {command}", library, f"not installed{purpose}; install it: {hint}") from None


def available(library: str) -> bool:
    try:
        importlib.import_module(library)
    except ImportError:
        return False
    return True
