"""`python -m tensorcost_lint.reference [ROOT]`: rewrite every generated docs page that is stale."""

import sys

from .pages import write_pages

for path in write_pages(sys.argv[1] if len(sys.argv) > 1 else "."):
    print(f"wrote {path}")
