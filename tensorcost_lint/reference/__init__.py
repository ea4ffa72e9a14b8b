"""Reference pages generated from the code: configuration keys (from the config parser), command-line
flags (from the argument parser) and the supported ops and modules (from the analysis tables).
`python -m tensorcost_lint.reference` rewrites them; tests/docs/test_generated_pages.py fails when
a page is stale."""
