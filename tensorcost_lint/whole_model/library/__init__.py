"""torch and nn semantics a whole-model run needs beyond the per-file op table: torch values
(dtypes, devices, `torch.finfo`), nn modules built and called (containers, casts, paths), library
idioms resolved to values, checkpointing, backward-only matmuls, and the KV cache of a decode
step."""
