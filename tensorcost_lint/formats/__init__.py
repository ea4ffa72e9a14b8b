"""Output formats: text, JSON (Contract 6), SARIF 2.1.0, GitHub workflow commands."""
