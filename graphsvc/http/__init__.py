"""The HTTP host: one ASGI app serving two protocols (GraphQL from :mod:`graphsvc.api`,
MCP from :mod:`graphsvc.mcp_api`), with what every request passes first (the front
door's admission and limits), probes, metrics, pages, and the worker processes'
settings (garbage collector, BLAS threads). Neither protocol package imports the other
or this one."""
