"""Python's semantics over known values, one entry per name: builtins and stdlib (`known_builtins`,
`known_calls`, `known_math`, `known_iteration`, `known_containers`, `known_methods`), classes and
their members (attributes, properties, decorators, registries, dataclasses), containers and their
mutation, call binding (`*args`, `**kwargs`), and which values need a gradient (`gradient_flow`)."""
