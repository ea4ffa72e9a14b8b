"""Closing the loop between the cost model and real hardware.

`calibrate` measures this machine and writes hardware evidence (Contract 3); `measure` runs each
planned operation on synthetic operands and compares the time with the modelled lower bound.
Nothing here imports numpy, torch or jax at module import: the linter must stay light, and those
libraries are optional extras, imported inside the functions that need them.
"""
