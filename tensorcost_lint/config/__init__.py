"""Loading users' YAML/TOML: project config (Contract 2), hardware evidence (3), plan files (4)."""
