"""One lint run: `engine.lint_source` for one file, the file walk, the worker pool, the result
cache, `--fix`, and the per-file settings. Sits above rules and formats, below the front ends."""
