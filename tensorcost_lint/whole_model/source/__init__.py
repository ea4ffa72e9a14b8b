"""Reading a model's code without running it: the source tree and installed packages read as text,
definitions found lazily by name, module-level bindings (star imports, re-exports, rebinding), and
the dims a run read. Above the value model only."""
