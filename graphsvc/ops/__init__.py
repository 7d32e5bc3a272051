"""Use cases, one module per public operation; Service delegates to them."""
