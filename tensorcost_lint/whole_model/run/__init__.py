"""The whole-model evaluator: `ModelRun` builds the model from its constructor and runs the entry
(`ModelEvaluator`, `ModelFlow`: expressions, assignments, branches decided, loops by trip count,
calls of the tree's code followed and summarised), over the Python, library and memory semantics
below it."""
