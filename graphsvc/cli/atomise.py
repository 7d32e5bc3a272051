"""CLI of the atomisation host layer: ``atomise``, ``namespace-policy``,
``export-forensic-bundle``, ``verify-bundle`` (SPEC ATM-8, ATM-9, API-4, API-7, SIG-3).

``namespace-policy`` shows the caller's namespace policy, or with ``--set`` stores a
new one (GraphQL ``setNamespacePolicy``; JSON text, ``@FILE`` or ``-`` for stdin;
human operators only). It exits 0, or with the table's code of its error.

``atomise`` exit codes (ATM-8, the CLI's one table in docs/cli.md): 0 success,
1 informational (already atomised / source too small), 2 not found, 3 tier locked,
4 curator failed, 5 governance refused, 6 database or signer error, 7 depth
exceeded, 8 any other refusal (invalid input, CAS conflict, purge pending).
``--json`` prints ``{sourceId, atomIds, atomCount, archivedAt}`` or
``{error, message, exitCode}``.

``verify-bundle`` needs no database and exits 0 when every check holds, 2 when any
fails. Commands connect without loading the embedding model until a command really
embeds something (only a successful ``atomise`` does), so refusals answer fast.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from graphsvc.cli.common import add_binding_args, binding_from_args, connected_service, int_in
from graphsvc.cli.exit_codes import EXIT_INFORMATIONAL, EXIT_OK
from graphsvc.cli.output import command, emit
from graphsvc.errors import InvalidInputError
from graphsvc.service import Service
from graphsvc.settings import Settings

__all__ = ["EXIT_VERIFY_FAILED", "register"]

EXIT_VERIFY_FAILED = 2


# --------------------------------------------------------------------- atomise
@command
def _cmd_atomise(args: argparse.Namespace, settings: Settings) -> int:
    binding = binding_from_args(args)
    Service.require_curator_tier(settings)  # ATM-4: before connecting to anything
    with connected_service(settings) as service:
        outcome = service.atomise(
            binding,
            args.atom_id,
            force=args.force,
            max_atom_tokens=args.max_atom_tokens,
            retries=3,  # ATM-7: the CLI always allows 3 retries
        )
    payload = outcome.to_json()
    if outcome.already_atomised:
        text = f"{args.atom_id} is already atomised into {outcome.atom_count} atoms"
    elif outcome.reason is not None:
        text = f"{args.atom_id}: {outcome.reason}; nothing atomised"
    else:
        text = f"{args.atom_id} atomised into {outcome.atom_count} atoms: " + " ".join(
            outcome.atom_ids
        )
    emit(args, payload, text)
    return EXIT_INFORMATIONAL if outcome.informational else EXIT_OK


# ------------------------------------------------------------ namespace policy
def _policy_text(raw: str) -> str:
    if raw == "-":
        return sys.stdin.read()
    if raw.startswith("@"):
        try:
            return Path(raw[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise InvalidInputError(f"cannot read policy file {raw[1:]}: {exc}") from exc
    return raw


@command
def _cmd_policy(args: argparse.Namespace, settings: Settings) -> int:
    binding = binding_from_args(args)
    raw = None if args.set is None else _policy_text(args.set)
    with connected_service(settings) as service:
        if raw is not None:
            stored = service.set_namespace_policy(binding, raw)
        else:
            stored = service.namespace_policy(binding)
    mode = stored.mode or "off"
    verb = "is now" if raw is not None else "is"
    emit(
        args,
        stored.to_json(),
        f"auto-atomise for {binding.subject} (policy {binding.policy}) {verb} {mode}; "
        f"threshold {stored.auto_atomise_threshold_cl100k} tokens, "
        f"atoms of at most {stored.auto_atomise_max_atom_tokens} tokens",
    )
    return EXIT_OK


# --------------------------------------------------------------------- bundles
def _flag(raw: str) -> bool:
    lowered = raw.strip().lower()
    if lowered in {"true", "1", "yes", "on"}:
        return True
    if lowered in {"false", "0", "no", "off"}:
        return False
    raise argparse.ArgumentTypeError("expected true or false")


@command
def _cmd_export(args: argparse.Namespace, settings: Settings) -> int:
    binding = binding_from_args(args)
    with connected_service(settings) as service:
        parts = service.collect_forensic_bundle(
            binding, args.memory_id, include_atomisation_chain=args.include_atomisation_chain
        )
        parts.write(args.output)
    payload: dict[str, Any] = {
        "path": str(args.output),
        "memories": len(parts.manifest["memories"]),
        "revisions": len(parts.revisions),
        "events": len(parts.events),
        "lineage": len(parts.lineage),
        "keys": len(parts.public_keys),
    }
    emit(args, payload, f"wrote {args.output} ({payload['memories']} memories)")
    return EXIT_OK


@command
def _cmd_verify(args: argparse.Namespace, _settings: Settings) -> int:
    report = Service.verify_bundle(args.path)
    payload = {"ok": report.ok, "problems": report.problems, "checked": report.checked}
    if report.ok:
        text = f"OK: {args.path} verifies ({report.checked})"
    else:
        text = f"FAILED: {args.path}\n" + "\n".join(f"  - {p}" for p in report.problems)
    emit(args, payload, text)
    return EXIT_OK if report.ok else EXIT_VERIFY_FAILED


# --------------------------------------------------------------------- register
def register(sub: Any) -> None:
    """Add ``atomise``, ``namespace-policy``, ``export-forensic-bundle``, ``verify-bundle``."""
    p = sub.add_parser("atomise", help="split an atom into signed atoms (ATM-8)")
    p.add_argument("atom_id", metavar="ATOM_ID")
    p.add_argument("--force", action="store_true", help="re-atomise an atomised atom")
    p.add_argument("--max-atom-tokens", type=int_in(50, 1000), default=None, help="50..1000")
    add_binding_args(p)
    p.set_defaults(handler=_cmd_atomise)

    p = sub.add_parser(
        "namespace-policy", help="show or set the namespace's auto-atomise policy (ATM-9)"
    )
    p.add_argument(
        "--set",
        metavar="JSON|@FILE|-",
        default=None,
        help='store this policy, e.g. \'{"auto_atomise_mode": "deferred"}\'',
    )
    add_binding_args(p)
    p.set_defaults(handler=_cmd_policy)

    p = sub.add_parser("export-forensic-bundle", help="write a forensic bundle (SIG-3)")
    p.add_argument("--memory-id", required=True)
    p.add_argument("-o", "--output", required=True, help="bundle file to write")
    p.add_argument(
        "--include-atomisation-chain",
        type=_flag,
        nargs="?",
        const=True,
        default=True,
        metavar="true|false",
    )
    add_binding_args(p)
    p.set_defaults(handler=_cmd_export)

    p = sub.add_parser("verify-bundle", help="verify a forensic bundle offline (no database)")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=_cmd_verify)
