"""CLI data commands, one module per command family, each with ``register(sub)``."""
