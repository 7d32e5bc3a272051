"""graphsvc over the Model Context Protocol (docs/agents.md), beside GraphQL.

- :mod:`graphsvc.mcp_api.arguments`: the tools' argument models and JSON Schemas,
  generated from the GraphQL schema's root fields and :mod:`graphsvc.inputs.models`;
- :mod:`graphsvc.mcp_api.tools`: one tool per public operation, each one call
  into the :class:`~graphsvc.service.Service` facade;
- :mod:`graphsvc.mcp_api.resources`: atoms as ``graphsvc://atom/<atomId>[@<rev>]``;
- :mod:`graphsvc.mcp_api.server`: the SDK server (tools, resources, error codes);
- :mod:`graphsvc.mcp_api.http`: streamable HTTP at ``/mcp`` of ``serve``, with
  Bearer tokens; ``graphsvc mcp`` (:mod:`graphsvc.cli.mcp_cmd`) serves stdio.
"""
