"""The `tensorcost` command line: one module per sub-command, all thin over the library."""
