"""`tensorcost explain CODE`: the rule's page (what it does, why, example, use instead)."""

from __future__ import annotations

from ..config.errors import ConfigError
from ..rules import RULES_BY_CODE
from ..rules.docs import rule_page, rule_table


def add_arguments(parser) -> None:
    parser.add_argument("code", nargs="?", metavar="CODE", help="a rule code like TCL401 (omit to list all)")


def run(args) -> int:
    if args.code is None:
        print(rule_table(), end="")
        return 0
    page = rule_page(args.code)
    if page is None:
        known = ", ".join(sorted(RULES_BY_CODE))
        raise ConfigError("explain", args.code, f"unknown rule code (known: {known})")
    print(page, end="")
    return 0
