"""A Neo4j that refuses graphsvc's credentials is a configuration error (issue 48)."""

from __future__ import annotations

import pytest


def test_neo4j_refusing_the_credentials_is_a_configuration_error() -> None:
    from neo4j.exceptions import AuthError

    from graphsvc.cli.exit_codes import ERROR_EXITS
    from graphsvc.errors import InvalidInputError
    from graphsvc.store.connection import _mapped

    with pytest.raises(InvalidInputError) as info, _mapped("connect"):
        raise AuthError("The client is unauthorized due to authentication failure.")
    assert info.value.code == "INVALID_INPUT" and ERROR_EXITS[info.value.code] == 8
    assert "GRAPHSVC_NEO4J_PASSWORD" in info.value.message
