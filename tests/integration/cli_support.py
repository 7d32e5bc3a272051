"""Running ``graphsvc`` as a real child process for the CLI tests.

The harness runs ``graphsvc.cli.main`` in a fresh interpreter and reports on stderr
which heavy modules the child imported, so a test can prove what a command's path
loads (the query-only encoder never loads PyTorch; the HTTP path loads none of them).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from graphsvc.core.binding import Binding
from graphsvc.inputs.models import parse_changes
from graphsvc.service import Service
from graphsvc.settings import Settings

TORCH = ("torch", "transformers", "sentence_transformers")
HEAVY = ("neo4j", "tiktoken", "numpy", "scipy", *TORCH, "onnxruntime", "strawberry", "pydantic")

_HARNESS = (
    "import json, sys\n"
    "from graphsvc.cli import main\n"
    "rc = main(sys.argv[1:])\n"
    f"heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
    "sys.stderr.write('\\nHEAVY=' + json.dumps(heavy) + '\\n')\n"
    "sys.exit(rc)\n"
)


def run_cli(env: dict[str, str], *args: str) -> tuple[int, str, str, list[str]]:
    """``graphsvc ARGS`` with ``env`` over this process's environment: exit code,
    stdout, stderr and the heavy modules the child imported."""
    run = subprocess.run(
        [sys.executable, "-c", _HARNESS, *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    err, _, heavy = run.stderr.rpartition("\nHEAVY=")
    return run.returncode, run.stdout, err, json.loads(heavy)


def direct_env(settings: Settings, state: Path) -> dict[str, str]:
    """The environment of a command that opens the test session's database itself."""
    return {
        "GRAPHSVC_NEO4J_URI": settings.neo4j.uri,
        "GRAPHSVC_NEO4J_USER": settings.neo4j.user,
        "GRAPHSVC_NEO4J_PASSWORD": settings.neo4j.password,
        "GRAPHSVC_NEO4J_DATABASE": settings.neo4j.database,
        "GRAPHSVC_STATE_DIR": str(state),
        "GRAPHSVC_KEY_FILE": settings.paths.key_file,
        "GRAPHSVC_SECRET_FILE": settings.paths.secret_file,
        "GRAPHSVC_SERVER_URL": "",
    }


def write_kiln_and_glaze(service: Service, binding: Binding) -> dict[str, Any]:
    """Two linked atoms with words no other test uses; their change ids → views."""
    out = service.write(
        binding,
        parse_changes(
            [
                {
                    "id": "kiln",
                    "op": "create",
                    "content": {
                        "text": "The zorblax kiln was fired at 1280 degrees for nine hours.",
                        "links": [{"role": "see-also", "target": {"local": "glaze"}}],
                    },
                    "sources": [],
                },
                {
                    "id": "glaze",
                    "op": "create",
                    "content": {"text": "The celadon glaze crazed on cooling.", "links": []},
                    "sources": [],
                },
            ]
        ),
    )
    return dict(out.changes)
