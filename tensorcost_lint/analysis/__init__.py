"""Static analysis of one file: imports, shape facts flowing through functions, call sites."""
