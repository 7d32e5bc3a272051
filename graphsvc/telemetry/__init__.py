"""What one process reports about its requests: the request's scope (id, deadline,
outcome) carried down to the store, its JSON logs and its Prometheus metrics."""
