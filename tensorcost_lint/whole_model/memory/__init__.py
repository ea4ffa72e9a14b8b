"""Memory of a training step and of serving (Contract 9): storage and views (one count per
storage), what each op saves for backward, retention and liveness, parameters, gradients and
optimizer states, and the peak over a step's phases. The run records into these; the report reads
their totals."""
