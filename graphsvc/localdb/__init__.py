"""The managed local Neo4j (fetched from Maven Central, run without Docker)."""

from graphsvc.localdb.launcher import Instance, LocalNeo4j

__all__ = ["Instance", "LocalNeo4j"]
