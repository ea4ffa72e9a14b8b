"""The `models:` entries inside `check`: runs a whole-model analysis for each entry, caches it,
costs its sites in the entry's context and merges the findings with the per-file ones. Above the
whole-model run, the rules and the driver; only the front ends import it."""
