"""Hardware evidence: the shipped datasheet devices and users' evidence files (Contract 3)."""
