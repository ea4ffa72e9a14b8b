"""The cost gate (`tensorcost baseline` / `check --baseline`): collects the current costs, compares
them against a committed baseline document and reports regressions. The documents it reads and
writes live in `baseline/`, below the rules that word a regression."""
