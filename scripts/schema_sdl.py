"""Write the served GraphQL schema's SDL to ``schema.graphql`` (or check it).

    python scripts/schema_sdl.py          # rewrite schema.graphql
    python scripts/schema_sdl.py --check  # exit 1 when schema.graphql has drifted

tests/unit/test_schema_sdl.py fails when the checked-in file and the served
schema differ; run this script after an intended schema change and commit both.
"""

from __future__ import annotations

import sys
from pathlib import Path

from graphsvc.api.schema import build_schema
from graphsvc.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
SDL_FILE = ROOT / "schema.graphql"


def served_sdl() -> str:
    """The SDL of the schema ``graphsvc serve`` serves (settings do not change it)."""
    return build_schema(Settings()).as_str().rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    sdl = served_sdl()
    if "--check" in args:
        same = SDL_FILE.exists() and SDL_FILE.read_text(encoding="utf-8") == sdl
        if not same:
            print("schema.graphql differs from the served schema; run scripts/schema_sdl.py")
        return 0 if same else 1
    SDL_FILE.write_text(sdl, encoding="utf-8")
    print(f"wrote {SDL_FILE.relative_to(ROOT)} ({len(sdl.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
