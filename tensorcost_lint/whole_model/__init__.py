"""Whole-model analysis (Contract 7): shapes flow from an entry point through the modules its class
builds in `__init__` and every call of code in the tree, on top of the per-file analysis layer."""
