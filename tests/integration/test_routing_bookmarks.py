"""Routing URIs (clusters, Aura): every session of a process shares one bookmark manager.

On a cluster a read may go to a follower; with the bookmarks of this process's
writes it waits until the follower has applied them (read-your-writes). The session
Neo4j is one server, which answers routing requests too, so the test checks the
wiring through a real ``neo4j://`` driver: a write leaves a bookmark that the next
session sends, and reads through the routing driver see the write.
"""

from __future__ import annotations

import uuid

from graphsvc.settings import Settings
from graphsvc.store.connection import Database


def test_a_routing_uri_shares_bookmarks_and_a_bolt_uri_sends_none(test_settings: Settings) -> None:
    bolt = test_settings.neo4j.uri
    assert bolt.startswith("bolt://")
    routed = Database.for_settings(
        test_settings,
        "neo4j://" + bolt.removeprefix("bolt://"),
        test_settings.neo4j.user,
        test_settings.neo4j.password,
    )
    plain = Database.for_settings(
        test_settings, bolt, test_settings.neo4j.user, test_settings.neo4j.password
    )
    try:
        assert plain.bookmarks is None
        assert routed.bookmarks is not None
        before = set(routed.bookmarks.get_bookmarks())
        key = f"routing-{uuid.uuid4().hex}"
        routed.write_tx(
            lambda tx: tx.run("CREATE (:RoutingProbe {key: $k})", k=key).consume(),
            label="test/probe",
        )
        after = set(routed.bookmarks.get_bookmarks())
        assert after and after != before  # the write's bookmark is kept for later sessions
        seen = routed.read_tx(
            lambda tx: tx.run(
                "MATCH (p:RoutingProbe {key: $k}) RETURN count(p) AS n", k=key
            ).single()["n"],
            label="test/probe",
        )
        assert seen == 1
    finally:
        routed.write_tx(
            lambda tx: tx.run("MATCH (p:RoutingProbe) DELETE p").consume(), label="test/probe"
        )
        routed.close()
        plain.close()
