"""`tensorcost lsp`: run the language server over stdin/stdout (see adapters/lsp_server.py).

pygls and lsprotocol are the optional extra `lsp`: they are imported here, when the command runs,
never by `tensorcost check` or the flake8 plugin.
"""

from __future__ import annotations

import sys

from ..config.errors import ConfigError
from ..config.config_discovery import ConfigResolver, Overrides, parse_dim_override

INSTALL_HINT = "pip install 'pygls>=2,<3' lsprotocol (tensorcost-lint's `lsp` extra)"


def add_arguments(parser) -> None:
    # Editors' LSP clients commonly append --stdio; it is the only transport, so it is accepted as such.
    parser.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (the default)")
    parser.add_argument("--config", metavar="FILE", help="use this tensorcost.yaml / pyproject.toml, no discovery")
    parser.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE",
                        help="declare or override a dim size (repeatable; beats config and pragmas)")
    parser.add_argument("--hardware", metavar="ID", help="hardware evidence id (shipped or from `evidence`)")
    parser.add_argument("--debounce", type=float, default=0.3, metavar="SECONDS",
                        help="wait this long after the last edit before re-linting a document (default 0.3)")


def run(args) -> int:
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError as error:
        print(f"tensorcost lsp: error: the language server needs pygls 2 and lsprotocol ({error}); "
              f"install them with: {INSTALL_HINT}", file=sys.stderr)
        return 2
    if args.debounce < 0:
        raise ConfigError("--debounce", str(args.debounce), "must be zero or more seconds")
    overrides = Overrides(config_file=args.config, dims=tuple(parse_dim_override(d) for d in args.dim),
                          hardware=args.hardware)
    if args.config:
        ConfigResolver(overrides)  # a wrong --config is the editor setup's mistake: exit 2 now, one line
    from ..adapters.lsp_server import serve

    serve(overrides, args.debounce)
    return 0
