"""The caller's JSON, checked once at the edge (GraphQL, MCP, CLI): the pydantic models
of changes and host inputs, and the text checks made before anything runs."""
