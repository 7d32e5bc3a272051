"""Bulk import of a JSONL file of atoms (``graphsvc import``): reading the rows, then
writing them in batches through the write path (docs/ingest.md)."""
