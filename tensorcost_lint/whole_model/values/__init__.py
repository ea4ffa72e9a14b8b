"""The value model of a whole-model run and the records it makes: instances, modules, classes,
functions and bound methods (`objects`), library objects (`library_objects`), optional values, the
site and call records a run keeps, the facts rules read (`model_facts`, `memory_facts`), and the
small tables every floor above shares (nn layer names, strides, the work budget). Imports nothing
else of the whole-model run."""
