"""Benchmark: what graphsvc's MCP ``tools/list`` costs a model, in cl100k tokens.

Run::

    .venv/bin/python bench/mcp_tools.py [--json PATH]

The tool objects exactly as ``tools/list`` lists them (name, description, input
schema, annotations; the SDK's own model dumped to compact JSON) are counted with
tiktoken's cl100k_base, for an agent token in the compact profile (the default: what
a host puts in its model's context), the full profile, and the full profile of a human
operator token. Each tool's share is printed too, largest first. No database is needed:
the list is built from the same code the server lists from. Writes
``bench/results/mcp_tools.json`` (or ``--json``). The budget the issue set is 2,500
tokens for the compact list (2,822 for the eight tools listed before it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BUDGET = 2_500
BEFORE = 2_822  # the eight tools of the full list before the compact profile


def _listed(tools: dict[str, Any], profile: str, can: frozenset[str]) -> list[dict[str, Any]]:
    from graphsvc.mcp_api.server import _tool
    from graphsvc.mcp_api.tools import listed

    return [
        _tool(t).model_dump(by_alias=True, exclude_none=True, mode="json")
        for t in tools.values()
        if listed(t, profile, can)
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, default=ROOT / "bench" / "results" / "mcp_tools.json")
    args = parser.parse_args()

    from graphsvc.api.schema import build_schema
    from graphsvc.keys.auth import default_capabilities
    from graphsvc.mcp_api.tools import build_tools
    from graphsvc.service import Service
    from graphsvc.settings import Settings
    from graphsvc.tokenizer import get_tokenizer

    settings = Settings()
    none = cast(Any, None)
    # The tools read only the Service's settings and write limits: no I/O here.
    service = Service(
        settings,
        none,
        none,
        none,
        secret=b"s" * 32,
        signing_keys=none,
        verification_keys=none,
        worker_of=none,
    )
    tools = build_tools(build_schema(settings)._schema, service)
    count = get_tokenizer().count
    agent = default_capabilities("agent")
    human = default_capabilities("human", purge=True)
    report: dict[str, Any] = {"budget": BUDGET, "before": BEFORE, "profiles": {}}
    for label, profile, can in (
        ("compact (agent)", "compact", agent),
        ("full (agent)", "full", agent),
        ("full (operator)", "full", human),
    ):
        listed = _listed(tools, profile, can)
        text = json.dumps(listed, separators=(",", ":"), ensure_ascii=False)
        per_tool = {
            t["name"]: count(json.dumps(t, separators=(",", ":"), ensure_ascii=False))
            for t in listed
        }
        total = count(text)
        report["profiles"][label] = {"tools": len(listed), "tokens": total, "perTool": per_tool}
        print(
            f"{label:17s} {len(listed):2d} tools  {total:5,d} cl100k tokens  "
            f"({total / BUDGET:.2f} of the budget, {total / BEFORE:.2f} of the list before)"
        )
        for name, n in sorted(per_tool.items(), key=lambda kv: -kv[1]):
            print(f"    {name:24s} {n:5,d}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
