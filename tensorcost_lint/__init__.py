"""tensorcost lint layer: LibCST analysis, rules, config loading and the front ends."""

__version__ = "0.1.0"
