"""Front ends that live inside other tools: the flake8 plugin and the language server.

Each only translates between its host and `engine.lint_source`; none holds rules or cost logic.
"""
