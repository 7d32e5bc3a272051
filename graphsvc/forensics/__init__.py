"""Forensic bundles (SIG-3): a deterministic tar an auditor verifies with no database."""

from graphsvc.forensics.bundle import (
    BUNDLE_FORMAT,
    VerifyReport,
    bundle_bytes,
    verify_bundle,
    verify_bundle_bytes,
    write_bundle,
)

__all__ = [
    "BUNDLE_FORMAT",
    "VerifyReport",
    "bundle_bytes",
    "verify_bundle",
    "verify_bundle_bytes",
    "write_bundle",
]
