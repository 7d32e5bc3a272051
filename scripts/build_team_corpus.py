# ruff: noqa: E501, B007  (a data table: long prose lines and wide tuples read best as they are)
"""Writes ``seed/team.json``: the demo corpus of an engineering team's history (issue 17).

Run ``.venv/bin/python scripts/build_team_corpus.py`` after editing the facts below; the
output is deterministic and committed. ``graphsvc seed`` loads it (see graphsvc/seed.py).

The corpus is the design and incident history of the "Atlas" platform team: twelve
services with their dependencies (including a required cycle), design records (ADRs),
incidents with root causes, timelines and follow-up actions, runbooks, SLOs, team
practices and a glossary. Batches are ordered so that every link points at an atom of
the same batch (``local``) or of an earlier one (``ref`` to a local id, resolved by the
loader). Later batches revise atoms (one adds a citation of a stored atom with a
verified range), retire superseded ones, and ``atomise`` names a long retrospective
note that the loader splits with signed lineage. A second subject holds a partner
team's few notes, to show that subjects never mix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "seed" / "team.json"
WIKI = "https://wiki.atlas.example"
GIT = "https://git.atlas.example/platform"

# name: (purpose, stack, depends-on (required), uses (optional))
SERVICES: dict[str, tuple[str, str, list[str], list[str]]] = {
    "api-gateway": (
        "terminates TLS for every public request, applies rate limits and routes to the backend services",
        "Envoy with a Go control plane",
        ["auth-gateway"],
        ["feature-flags"],
    ),
    "auth-gateway": (
        "checks session cookies and API keys and mints the short-lived internal JWTs",
        "Kotlin on the JVM with a Redis session store",
        ["feature-flags", "redis-cache"],
        [],
    ),
    "feature-flags": (
        "serves flag values to every service and records who changed which flag",
        "a small Go service backed by Postgres",
        ["api-gateway", "postgres-primary"],
        [],
    ),
    "payments-api": (
        "accepts card and bank payments from the web shop and the mobile apps",
        "Python with FastAPI",
        ["ledger", "auth-gateway"],
        ["notification-service"],
    ),
    "ledger": (
        "keeps the double-entry ledger of every payment, refund and fee",
        "Java with Postgres as the system of record",
        ["postgres-primary", "kafka-cluster"],
        [],
    ),
    "ingest-worker": (
        "pulls partner settlement files every night and turns them into ledger events",
        "Python workers scheduled by Airflow",
        ["kafka-cluster", "ledger"],
        [],
    ),
    "search-indexer": (
        "keeps the merchant search index in step with the catalogue",
        "Rust consumers writing to OpenSearch",
        ["kafka-cluster"],
        ["redis-cache"],
    ),
    "notification-service": (
        "sends receipts, password resets and payout notices by e-mail and push",
        "Node.js with a Postgres outbox table",
        ["kafka-cluster"],
        ["feature-flags"],
    ),
    "billing-batch": (
        "computes the monthly merchant invoices from the ledger",
        "Spark jobs on the analytics cluster",
        ["ledger"],
        ["notification-service"],
    ),
    "postgres-primary": (
        "is the shared Postgres 15 cluster with one primary and two synchronous replicas",
        "Patroni on three dedicated hosts",
        [],
        [],
    ),
    "kafka-cluster": (
        "carries every domain event between the services",
        "Kafka 3.6 with KRaft on five brokers",
        [],
        [],
    ),
    "redis-cache": (
        "holds sessions, rate-limit counters and hot lookups",
        "Redis 7 in a three-node Sentinel setup",
        [],
        [],
    ),
}

# (service, number, title, decision, rationale, supersedes number or None)
ADRS: list[tuple[str, int, str, str, str, int | None]] = [
    (
        "api-gateway",
        3,
        "rate limits per API key",
        "rate limits are counted per API key in Redis with a sliding window of sixty seconds",
        "per-IP limits punished merchants behind shared NAT gateways",
        None,
    ),
    (
        "api-gateway",
        11,
        "retry budget",
        "the gateway retries an idempotent upstream call at most once and only within a 10% retry budget",
        "unbounded retries turned a slow ledger into a full outage in INC-2041",
        None,
    ),
    (
        "api-gateway",
        19,
        "HTTP/2 to backends",
        "the gateway speaks HTTP/2 to every backend with a pool of four connections per host",
        "HTTP/1.1 pools exhausted file descriptors at peak",
        None,
    ),
    (
        "auth-gateway",
        4,
        "JWT lifetime",
        "internal JWTs live for fifteen minutes and are never refreshed by backends",
        "long-lived tokens kept revoked sessions alive for hours",
        None,
    ),
    (
        "auth-gateway",
        14,
        "signing key rotation",
        "JWT signing keys rotate every thirty days with a seven-day overlap in which both keys verify",
        "a rotation without overlap logged out every user in INC-2107",
        None,
    ),
    (
        "auth-gateway",
        22,
        "session store",
        "sessions move from Postgres to Redis with an eight-hour TTL",
        "session reads were a third of all primary database queries",
        None,
    ),
    (
        "feature-flags",
        6,
        "flag evaluation",
        "services evaluate flags locally from a snapshot refreshed every thirty seconds",
        "per-request flag calls added 8 ms to every request",
        None,
    ),
    (
        "feature-flags",
        15,
        "snapshot fallback",
        "a service that cannot refresh its snapshot keeps the last good one for up to 24 hours",
        "flag outages must not change product behaviour",
        None,
    ),
    (
        "feature-flags",
        23,
        "audit trail",
        "every flag change is written with the author, the reason and a link to the change ticket",
        "nobody could tell who disabled the payout flag in INC-2188",
        None,
    ),
    (
        "payments-api",
        2,
        "idempotency keys v1",
        "payment requests carry an idempotency key kept in Postgres for 24 hours",
        "mobile clients retry on flaky networks and caused duplicate charges",
        None,
    ),
    (
        "payments-api",
        12,
        "idempotency keys v2",
        "idempotency keys are kept for seven days and scoped to the merchant",
        "24 hours was too short for batch clients that retry the next day",
        2,
    ),
    (
        "payments-api",
        20,
        "card vault",
        "raw card numbers never reach payments-api; the vault returns tokens",
        "it takes payments-api out of the strictest PCI scope",
        None,
    ),
    (
        "ledger",
        1,
        "double entry",
        "every money movement is two ledger entries that sum to zero in one transaction",
        "single-entry bookkeeping could not prove balances",
        None,
    ),
    (
        "ledger",
        9,
        "outbox events",
        "ledger publishes events through a transactional outbox polled every 200 ms",
        "dual writes to Postgres and Kafka lost events on crashes",
        None,
    ),
    (
        "ledger",
        17,
        "partitioning",
        "the entries table is partitioned by month and old partitions are detached after 25 months",
        "vacuum on the 2 TB table ran for days",
        None,
    ),
    (
        "ingest-worker",
        5,
        "file checksums",
        "every settlement file is checked against the partner's SHA-256 manifest before parsing",
        "a truncated file booked half of a day's settlements",
        None,
    ),
    (
        "ingest-worker",
        13,
        "exactly-once booking",
        "ingest writes a file's events with the file digest as idempotency key",
        "a rerun after a crash booked one file twice",
        None,
    ),
    (
        "ingest-worker",
        21,
        "scratch disk",
        "workers write parsed chunks to object storage instead of the local scratch disk",
        "a full scratch disk crashed the worker in INC-2230",
        None,
    ),
    (
        "search-indexer",
        7,
        "reindex strategy",
        "a full reindex builds a new index and switches an alias atomically",
        "in-place reindexing served half-empty results for an hour",
        None,
    ),
    (
        "search-indexer",
        16,
        "consumer lag alert",
        "an alert fires when consumer lag stays above 50 000 events for ten minutes",
        "stale search results went unnoticed for a day",
        None,
    ),
    (
        "search-indexer",
        24,
        "bulk size",
        "bulk requests are capped at 5 MB",
        "larger bulks tripped OpenSearch circuit breakers",
        None,
    ),
    (
        "notification-service",
        8,
        "provider failover",
        "e-mail goes through two providers with automatic failover on five consecutive errors",
        "a provider outage delayed password resets by six hours",
        None,
    ),
    (
        "notification-service",
        18,
        "dedup window",
        "notifications are deduplicated by event id for 48 hours",
        "Kafka redeliveries sent customers the same receipt three times",
        None,
    ),
    (
        "notification-service",
        25,
        "quiet hours",
        "marketing pushes respect the recipient's local quiet hours from 22:00 to 07:00",
        "complaints about night-time pushes doubled in March",
        None,
    ),
    (
        "billing-batch",
        10,
        "invoice reruns",
        "an invoice run is identified by merchant and month so that reruns replace, never add",
        "a rerun in January doubled forty invoices",
        None,
    ),
    (
        "billing-batch",
        26,
        "ledger snapshot",
        "billing reads a consistent ledger snapshot exported at 00:30 UTC",
        "reading the live ledger mixed two days of fees",
        None,
    ),
    (
        "postgres-primary",
        27,
        "synchronous replicas",
        "the primary waits for one of two synchronous replicas before a commit returns",
        "an asynchronous failover lost eleven seconds of payments",
        None,
    ),
    (
        "postgres-primary",
        28,
        "connection pooling v1",
        "every service connects through PgBouncer in session mode",
        "direct connections exhausted max_connections",
        None,
    ),
    (
        "postgres-primary",
        29,
        "connection pooling v2",
        "PgBouncer runs in transaction mode and services drop session state",
        "session mode still needed 1 800 server connections at peak",
        28,
    ),
    (
        "kafka-cluster",
        30,
        "replication factor",
        "every topic has replication factor three and min.insync.replicas two",
        "a broker loss made two topics unwritable",
        None,
    ),
    (
        "kafka-cluster",
        31,
        "retention",
        "domain topics keep seven days of events; the ledger topic keeps thirty",
        "replays after incidents needed more than three days",
        None,
    ),
    (
        "redis-cache",
        32,
        "eviction policy",
        "the cache uses allkeys-lru and sessions live in a separate logical database with noeviction",
        "LRU evicted live sessions during a traffic spike",
        None,
    ),
    (
        "redis-cache",
        33,
        "sentinel quorum",
        "three Sentinels with a quorum of two decide failovers",
        "a single Sentinel failed over on a network blip",
        None,
    ),
]

# id, date, service, title, impact, trigger, root cause, detection, fix, three actions
INCIDENTS: list[tuple[int, str, str, str, str, str, str, str, str, list[str]]] = [
    (
        2041,
        "2025-11-03",
        "api-gateway",
        "retry storm against the ledger",
        "payments failed for 38 minutes for about 60% of requests",
        "a slow ledger query after a deploy raised p99 latency to four seconds",
        "the gateway retried every timed-out call three times, tripling the load on an already slow ledger",
        "the payments error-rate alert fired four minutes after the deploy",
        "the deploy was rolled back and gateway retries were switched off by flag",
        [
            "cap gateway retries with a retry budget",
            "add a load test for the slow-ledger case",
            "alert on upstream retry rate",
        ],
    ),
    (
        2107,
        "2025-12-09",
        "auth-gateway",
        "signing key rotation logged everybody out",
        "every user was logged out and 14% of API calls failed for 22 minutes",
        "the monthly signing key rotation replaced the key without an overlap period",
        "backends cached only the new public key while live JWTs were signed with the old one",
        "support tickets arrived before any alert fired",
        "the old key was restored as a second verification key",
        [
            "rotate keys with an overlap period",
            "alert on JWT verification failures",
            "add the rotation to the change calendar",
        ],
    ),
    (
        2150,
        "2026-01-15",
        "ledger",
        "replication lag stalled payouts",
        "payouts were delayed by three hours",
        "a bulk backfill of fee corrections ran on the primary during business hours",
        "the backfill wrote 40 million rows in one transaction and the replicas fell behind",
        "the replica lag alert fired after 15 minutes",
        "the backfill was cancelled and rerun in batches of 10 000 rows at night",
        [
            "batch every backfill",
            "require a review for writes over one million rows",
            "show replica lag on the payouts dashboard",
        ],
    ),
    (
        2188,
        "2026-02-02",
        "feature-flags",
        "payout flag disabled by mistake",
        "merchant payouts stopped for five hours",
        "an engineer disabled the payout flag in production while testing in staging",
        "the flag console used the same colours for staging and production and kept no audit trail",
        "a merchant called the account manager",
        "the flag was re-enabled and payouts were replayed",
        [
            "record the author and reason of every flag change",
            "colour the production console red",
            "require a second approval for payout flags",
        ],
    ),
    (
        2230,
        "2026-02-20",
        "ingest-worker",
        "scratch disk full crashed the ingest worker",
        "settlement files of two partners were booked nine hours late",
        "debug logging was left on after a migration and the log rotation job was disabled",
        "the scratch disk filled up with rotated debug logs and the worker crashed mid-file",
        "the disk alert was set at 98% and fired eleven minutes after the crash",
        "old logs were deleted and the nightly rotation job re-enabled",
        [
            "move parsed chunks to object storage",
            "alert on disk at 80%",
            "check the rotation job in the migration checklist",
        ],
    ),
    (
        2264,
        "2026-03-11",
        "search-indexer",
        "stale merchant search after a mapping change",
        "merchant search showed day-old results for 26 hours",
        "a mapping change made the consumer reject every document with a new field",
        "rejected documents were logged at debug level and the consumer kept committing offsets",
        "a merchant reported that a new product could not be found",
        "the mapping was fixed and the topic replayed from the last good offset",
        [
            "alert on rejected documents",
            "stop committing offsets on mapping errors",
            "add the lag alert from ADR-016",
        ],
    ),
    (
        2301,
        "2026-04-07",
        "notification-service",
        "duplicate receipts after a Kafka rebalance",
        "about 90 000 customers received two or three copies of a receipt",
        "a consumer group rebalance during a deploy redelivered two hours of events",
        "the service deduplicated only within a single process's memory",
        "customer complaints on social media",
        "the consumers were paused until the rebalance finished",
        [
            "deduplicate by event id in Postgres",
            "use cooperative rebalancing",
            "deploy consumers one at a time",
        ],
    ),
    (
        2339,
        "2026-05-19",
        "postgres-primary",
        "failover lost eleven seconds of writes",
        "eleven seconds of committed payments had to be recovered from the ledger events",
        "a hardware fault took down the primary",
        "replication was asynchronous, so the promoted replica missed the last commits",
        "Patroni paged the on-call engineer at failover",
        "the missing payments were rebuilt from the Kafka ledger topic",
        [
            "make one replica synchronous",
            "rehearse failover every quarter",
            "document recovery from ledger events",
        ],
    ),
    (
        2377,
        "2026-06-24",
        "redis-cache",
        "session eviction during a traffic spike",
        "about 30% of logged-in users were logged out during a campaign",
        "a marketing campaign tripled traffic and rate-limit keys filled the memory",
        "sessions and rate-limit counters shared one database with allkeys-lru eviction",
        "the auth error-rate alert fired after six minutes",
        "the memory limit was raised and counters moved to a separate database",
        [
            "separate sessions from evictable keys",
            "load test before campaigns",
            "alert on evicted keys",
        ],
    ),
    (
        2410,
        "2026-07-30",
        "billing-batch",
        "doubled invoices after a rerun",
        "forty merchants received doubled July invoices",
        "the July run was rerun after a partial failure",
        "reruns inserted new invoices instead of replacing the month's run",
        "the finance team spotted the totals in the monthly review",
        "the duplicate invoices were voided and corrected invoices sent",
        [
            "key invoice runs by merchant and month",
            "compare run totals with the ledger before sending",
            "add a dry-run mode",
        ],
    ),
    (
        2455,
        "2026-09-02",
        "kafka-cluster",
        "under-replicated partitions after a broker loss",
        "two topics rejected writes for 17 minutes",
        "a broker's disk failed while another was being patched",
        "those topics had replication factor two, so one live replica was below min.insync.replicas",
        "producer error alerts in three services",
        "the patched broker was brought back early",
        [
            "raise replication factor to three everywhere",
            "patch one broker at a time with a check",
            "alert on under-replicated partitions",
        ],
    ),
    (
        2490,
        "2026-10-14",
        "payments-api",
        "duplicate charges from a batch client",
        "312 payments were charged twice",
        "a merchant's batch client retried a failed upload the next morning",
        "idempotency keys expired after 24 hours",
        "the merchant's reconciliation",
        "the duplicates were refunded",
        [
            "keep idempotency keys for seven days",
            "scope keys to the merchant",
            "tell batch merchants about the key window",
        ],
    ),
]

# (service, title, steps)
RUNBOOKS: list[tuple[str, str, str]] = [
    (
        "api-gateway",
        "shed load",
        "Switch the gateway to the degraded profile with the shed-load flag, check that the error rate of premium keys stays under 1%, then raise the global limit step by step.",
    ),
    (
        "api-gateway",
        "roll back a route change",
        "Revert the route in the control plane repository, wait for the config version to reach every Envoy, then confirm with the route-check dashboard.",
    ),
    (
        "auth-gateway",
        "rotate signing keys",
        "Publish the new public key, wait seven days, switch signing to the new key, and remove the old key only after another seven days.",
    ),
    (
        "auth-gateway",
        "revoke all sessions",
        "Bump the session epoch in Redis, watch the login rate, and post a status page note before doing it.",
    ),
    (
        "feature-flags",
        "restore a flag",
        "Find the change in the audit trail, revert it with a reason, and check that every service's snapshot age is under one minute.",
    ),
    (
        "feature-flags",
        "serve from snapshot",
        "If Postgres is down, set the read-only flag so services keep their last snapshot, and page the database on-call.",
    ),
    (
        "payments-api",
        "refund duplicate charges",
        "Query the ledger for payments with the same merchant, amount and idempotency key prefix, confirm with finance, then refund in batches of 50.",
    ),
    (
        "payments-api",
        "drain a region",
        "Set the region weight to zero at the gateway, wait for in-flight payments to finish, then stop the pods.",
    ),
    (
        "ledger",
        "run a backfill",
        "Write the backfill as batches of 10 000 rows, run it between 01:00 and 05:00 UTC, and watch replica lag; stop if lag passes 30 seconds.",
    ),
    (
        "ledger",
        "replay the outbox",
        "Reset the outbox cursor to the last published id, restart the poller, and compare event counts with the entries table.",
    ),
    (
        "ingest-worker",
        "rerun a settlement file",
        "Check the file digest against the manifest, rerun with the same digest so booking stays idempotent, and reconcile totals with the partner.",
    ),
    (
        "ingest-worker",
        "clear the scratch disk",
        "Stop the worker, delete rotated logs older than two days, check that the rotation job is enabled, and start the worker again.",
    ),
    (
        "search-indexer",
        "full reindex",
        "Create a new index from the template, run the backfill job, compare document counts, and switch the alias.",
    ),
    (
        "search-indexer",
        "replay from an offset",
        "Pause the consumer, reset the group to the chosen offset, resume, and watch the rejected-documents counter.",
    ),
    (
        "notification-service",
        "fail over the e-mail provider",
        "Set the provider flag to the secondary, send a test receipt, and watch the bounce rate for an hour.",
    ),
    (
        "notification-service",
        "purge a notification backlog",
        "Pause the consumers, delete queued marketing notifications older than a day, keep receipts and resets, and resume.",
    ),
    (
        "billing-batch",
        "rerun a month",
        "Run the month with dry-run first, compare totals with the ledger snapshot, then run for real; the run key replaces the old invoices.",
    ),
    (
        "billing-batch",
        "void an invoice",
        "Void the invoice in the billing console, issue a credit note, and notify the merchant's account manager.",
    ),
    (
        "postgres-primary",
        "manual failover",
        "Check that a synchronous replica is streaming, run patronictl switchover, and confirm that writes succeed on the new primary.",
    ),
    (
        "postgres-primary",
        "recover from ledger events",
        "Find the last commit on the new primary, replay ledger events after it from Kafka into the recovery tool, and reconcile with payments-api logs.",
    ),
    (
        "kafka-cluster",
        "replace a broker",
        "Move partition leadership away, stop the broker, replace the disk, start it, and wait until no partition is under-replicated.",
    ),
    (
        "kafka-cluster",
        "raise replication factor",
        "Generate a reassignment plan with three replicas, apply it throttled to 50 MB/s, and verify with the under-replicated partitions metric.",
    ),
    (
        "redis-cache",
        "fail over Redis",
        "Ask a Sentinel to fail over, check that clients reconnect within 30 seconds, and look for a spike in logins.",
    ),
    (
        "redis-cache",
        "free memory",
        "Find the largest key prefixes with the memory analyser, lower their TTLs, and never flush the sessions database.",
    ),
]

# service: (SLO text, revised SLO text or None)
SLOS: dict[str, tuple[str, str | None]] = {
    "api-gateway": (
        "99.95% of requests succeed each month, and p99 latency stays under 300 ms",
        "99.95% of requests succeed each month, and p99 latency stays under 250 ms since the HTTP/2 change",
    ),
    "auth-gateway": ("99.99% of token checks succeed each month", None),
    "feature-flags": ("snapshots are never older than two minutes for 99.9% of the month", None),
    "payments-api": (
        "99.95% of payment requests succeed, and p99 latency stays under 800 ms",
        "99.95% of payment requests succeed, and p99 latency stays under 600 ms",
    ),
    "ledger": ("events reach Kafka within 5 seconds of commit for 99.9% of entries", None),
    "ingest-worker": (
        "every partner file is booked by 06:00 UTC on 99% of days",
        "every partner file is booked by 05:00 UTC on 99% of days",
    ),
    "search-indexer": (
        "catalogue changes are searchable within two minutes for 99% of updates",
        None,
    ),
    "notification-service": ("receipts are sent within one minute for 99.5% of payments", None),
    "billing-batch": ("invoices are ready on the second working day of each month", None),
    "postgres-primary": ("the primary accepts writes 99.99% of the month", None),
    "kafka-cluster": ("producers can write to every topic 99.99% of the month", None),
    "redis-cache": ("cache reads succeed 99.95% of the month", None),
}

GLOSSARY: dict[str, str] = {
    "idempotency key": "An idempotency key is a client-chosen id that makes a retried request return the first result instead of acting twice.",
    "retry budget": "A retry budget limits retries to a fixed share of normal traffic so retries cannot multiply load during an outage.",
    "transactional outbox": "A transactional outbox writes events into a table in the same transaction as the data and publishes them later.",
    "consumer lag": "Consumer lag is how many events a Kafka consumer group is behind the end of a topic.",
    "synchronous replica": "A synchronous replica must confirm a commit before the primary reports it as done.",
    "SLO": "An SLO is a target for how often a service must work as promised, measured over a month.",
    "error budget": "The error budget is the share of failures an SLO allows; when it is spent, releases stop until reliability work lands.",
    "postmortem": "A postmortem is a blameless write-up of an incident: impact, timeline, causes and follow-up actions.",
    "on-call": "On-call engineers answer pages for the services of their rotation for one week at a time.",
    "feature flag": "A feature flag switches behaviour at run time without a deploy.",
    "PCI scope": "PCI scope is the set of systems that store, process or transmit card numbers and must meet PCI DSS.",
    "alias switch": "An alias switch points a search alias at a new index in one atomic step.",
    "replica lag": "Replica lag is how far a database replica is behind the primary, in seconds or bytes.",
    "rebalance": "A rebalance reassigns Kafka partitions among the consumers of a group.",
    "dry run": "A dry run computes every result of a job without writing or sending anything.",
    "blast radius": "The blast radius of a change is the set of users and systems that a failure of it can hurt.",
}

PRACTICES: list[tuple[str, str, list[str]]] = [
    (
        "on-call rotation",
        "The platform team runs a weekly on-call rotation of six engineers with a secondary who takes over after fifteen minutes without acknowledgement.",
        ["on-call"],
    ),
    (
        "incident severity",
        "Severity 1 means money movement or logins are broken for many users; severity 2 means a degraded service with a workaround; everything else is severity 3.",
        ["postmortem"],
    ),
    (
        "postmortem policy",
        "Every severity 1 or 2 incident gets a blameless postmortem within five working days, reviewed in the Thursday operations meeting.",
        ["postmortem"],
    ),
    (
        "action item policy",
        "Postmortem action items get an owner and a due date; severity 1 actions are due within thirty days.",
        ["postmortem"],
    ),
    (
        "change calendar",
        "Risky changes such as key rotations, failovers and schema migrations go on the shared change calendar at least two days ahead.",
        ["blast radius"],
    ),
    (
        "deploy freeze",
        "There are no production deploys from the 20th of December to the 2nd of January, except fixes for severity 1 incidents.",
        [],
    ),
    (
        "code review",
        "Every change to a payment path needs two approvals, one of them from the owning team.",
        [],
    ),
    (
        "release train",
        "Services deploy from main at least daily; a deploy that fails its canary for ten minutes rolls back by itself.",
        [],
    ),
    (
        "error budget policy",
        "When a service has spent its monthly error budget, its team ships only reliability work until the budget recovers.",
        ["error budget", "SLO"],
    ),
    (
        "load testing",
        "Load tests run against the staging copy at twice the last peak before every campaign and every major release.",
        [],
    ),
    (
        "game days",
        "Each quarter the team runs a game day that breaks one dependency on purpose in staging and times the recovery.",
        [],
    ),
    (
        "runbook standard",
        "Every page that can fire has a runbook with a first step that is safe to run at 3 a.m. without context.",
        ["on-call"],
    ),
    (
        "alert standard",
        "Alerts page only for symptoms users feel; causes such as disk or CPU go to a ticket queue unless they predict an outage within an hour.",
        ["SLO"],
    ),
    (
        "access reviews",
        "Production access is reviewed every quarter and removed after ninety days without use.",
        [],
    ),
    (
        "dependency map",
        "The service dependency map is generated from the gateway routes and Kafka topics every night and checked into the wiki.",
        [],
    ),
    (
        "capacity planning",
        "Capacity for Postgres, Kafka and Redis is reviewed every quarter against a forecast of peak payments per second.",
        [],
    ),
]

RETRO = (
    "The third quarter of 2026 had four severity 2 incidents and no severity 1, the best quarter since the team was formed. "
    "Most incidents came from changes made during migrations, so the migration checklist now includes logging, rotation jobs and alert thresholds. "
    "Error budgets held for every service except billing-batch, whose July rerun doubled forty invoices. "
    "Game days found that nobody outside the database group could run a Postgres failover, so two more engineers are now trained. "
    "The team will spend the fourth quarter on moving sessions off the shared Redis and on raising Kafka replication to three everywhere. "
    "Pager load fell from eleven pages a week to six after alerts on causes moved to the ticket queue."
)

OWNERS: dict[str, tuple[str, str]] = {
    "api-gateway": ("edge", "edge-primary"),
    "auth-gateway": ("identity", "identity-primary"),
    "feature-flags": ("edge", "edge-primary"),
    "payments-api": ("payments", "payments-primary"),
    "ledger": ("core-ledger", "ledger-primary"),
    "ingest-worker": ("data", "data-primary"),
    "search-indexer": ("data", "data-primary"),
    "notification-service": ("comms", "comms-primary"),
    "billing-batch": ("core-ledger", "ledger-primary"),
    "postgres-primary": ("infrastructure", "database"),
    "kafka-cluster": ("infrastructure", "streaming"),
    "redis-cache": ("infrastructure", "database"),
}

METRICS: dict[str, list[tuple[str, str]]] = {
    "api-gateway": [
        (
            "upstream_retry_ratio",
            "is the share of upstream calls that are retries; the retry budget caps it at 0.1",
        ),
        ("requests_5xx_total", "counts answers with a 5xx status, per route and upstream"),
    ],
    "auth-gateway": [
        (
            "jwt_verify_failures_total",
            "counts JWT checks that failed, by reason such as expired or unknown key",
        ),
        ("session_lookup_seconds", "is the latency of session lookups in Redis"),
    ],
    "feature-flags": [
        ("snapshot_age_seconds", "is how old each service's flag snapshot is"),
        ("flag_changes_total", "counts flag changes by flag and author"),
    ],
    "payments-api": [
        ("payments_failed_total", "counts payments that failed, by payment method and reason"),
        ("idempotent_replays_total", "counts requests answered from a stored idempotency key"),
    ],
    "ledger": [
        ("outbox_publish_delay_seconds", "is the time from commit to the event reaching Kafka"),
        (
            "entries_unbalanced_total",
            "counts transactions whose entries do not sum to zero and must stay at zero",
        ),
    ],
    "ingest-worker": [
        ("files_booked_total", "counts settlement files booked, by partner"),
        ("scratch_disk_used_ratio", "is the used share of the worker's scratch disk"),
    ],
    "search-indexer": [
        ("consumer_lag_events", "is how many catalogue events the indexer is behind"),
        ("documents_rejected_total", "counts documents OpenSearch refused, by reason"),
    ],
    "notification-service": [
        ("notifications_sent_total", "counts notifications by channel and template"),
        ("duplicates_suppressed_total", "counts notifications dropped by the dedup window"),
    ],
    "billing-batch": [
        ("invoice_run_seconds", "is the duration of each monthly invoice run"),
        ("invoice_total_mismatch", "is the difference between run totals and the ledger snapshot"),
    ],
    "postgres-primary": [
        ("replication_lag_seconds", "is how far each replica is behind the primary"),
        ("connections_in_use", "is the number of server connections in use through PgBouncer"),
    ],
    "kafka-cluster": [
        (
            "under_replicated_partitions",
            "counts partitions with fewer in-sync replicas than their replication factor",
        ),
        ("produce_errors_total", "counts producer errors by topic"),
    ],
    "redis-cache": [
        ("evicted_keys_total", "counts keys evicted by the memory policy"),
        ("used_memory_ratio", "is used memory as a share of maxmemory"),
    ],
}

INTERFACES: dict[tuple[str, str], str] = {
    (
        "api-gateway",
        "auth-gateway",
    ): "over gRPC to check every request's credentials, with a 300 ms timeout",
    ("api-gateway", "feature-flags"): "for the routing flags, refreshed every thirty seconds",
    ("auth-gateway", "feature-flags"): "for the login and MFA flags from its local snapshot",
    ("auth-gateway", "redis-cache"): "to read and write sessions with a 50 ms timeout",
    (
        "feature-flags",
        "api-gateway",
    ): "through the internal route to publish snapshots to the edge, which makes a dependency cycle the team accepts",
    ("feature-flags", "postgres-primary"): "to store flags and their audit trail",
    (
        "payments-api",
        "ledger",
    ): "over gRPC to post the two entries of each payment, with a two-second timeout",
    ("payments-api", "auth-gateway"): "to resolve the merchant behind an API key",
    (
        "payments-api",
        "notification-service",
    ): "indirectly, through the payment-succeeded topic that triggers receipts",
    (
        "ledger",
        "postgres-primary",
    ): "as its system of record, through PgBouncer in transaction mode",
    ("ledger", "kafka-cluster"): "through the outbox poller that publishes to the ledger topic",
    ("ingest-worker", "kafka-cluster"): "to publish parsed settlement events",
    (
        "ingest-worker",
        "ledger",
    ): "to book settlement events with the file digest as idempotency key",
    ("search-indexer", "kafka-cluster"): "as a consumer of the catalogue topic",
    ("notification-service", "kafka-cluster"): "as a consumer of the payment and account topics",
    ("billing-batch", "ledger"): "by reading the nightly ledger snapshot, never the live tables",
    ("billing-batch", "notification-service"): "to send invoice-ready notices to merchants",
}

PARTNER: list[str] = [
    "The Orion partner team integrates the settlement files of three banks for Atlas.",
    "Orion sends settlement files at 02:00 UTC with a SHA-256 manifest.",
    "Orion's contact for file format changes is their integration desk, reachable through the shared channel.",
    "A format change from Orion is announced at least four weeks ahead.",
    "Orion retries a failed upload three times, ten minutes apart.",
    "Orion's files use semicolons as separators and ISO 8601 dates.",
    "Orion keeps every file for ninety days and can resend any of them.",
    "Orion's test environment accepts files at any time of day.",
    "Orion had one late file in 2026, on the 14th of March, because of a bank holiday.",
    "Orion's settlement totals are reconciled with Atlas ledger totals every morning.",
    "Orion asked for a webhook when a file fails validation.",
    "Orion and Atlas review the integration twice a year.",
]


def slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")


def create(
    cid: str,
    text: str,
    links: list[dict[str, Any]] | None = None,
    sources: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "id": cid,
        "op": "create",
        "content": {"text": text, "links": links or []},
        "sources": sources or [],
    }


def link(role: str, local: str, *, required: bool = False, at: str | None = None) -> dict[str, Any]:
    target: dict[str, Any] = {"local": local, "required": required}
    if at:
        target["at"] = at
    return {"role": role, "target": target}


def build() -> dict[str, Any]:
    # ---- batch 1: services (with a required dependency cycle), glossary, practices
    b1: list[dict[str, Any]] = []
    for term, text in GLOSSARY.items():
        b1.append(create(f"term:{slug(term)}", text))
    for name, (purpose, stack, needs, uses) in SERVICES.items():
        links = [link("depends-on", f"svc:{d}", required=True) for d in needs]
        links += [link("uses", f"svc:{u}") for u in uses]
        b1.append(
            create(
                f"svc:{name}",
                f"{name} {purpose}. It is built with {stack}.",
                links,
                [{"uri": f"{WIKI}/services/{name}", "version": "2026-10"}],
            )
        )
    for title, text, terms in PRACTICES:
        links = [link("uses-term", f"term:{slug(t)}", at="logical") for t in terms]
        b1.append(
            create(
                f"practice:{slug(title)}",
                text,
                links,
                [{"uri": f"{WIKI}/handbook/{slug(title)}", "version": "v4"}],
            )
        )
    # ---- batch 2: SLOs, incidents, ADRs
    b2: list[dict[str, Any]] = []
    for name, (slo, _) in SLOS.items():
        b2.append(
            create(
                f"slo:{name}",
                f"The SLO of {name}: {slo}.",
                [
                    link("slo-of", f"svc:{name}", required=True),
                    link("uses-term", "term:slo", at="logical"),
                ],
            )
        )
    for inc in INCIDENTS:
        num, date, svc, title, impact, *_ = inc
        b2.append(
            create(
                f"inc:{num}",
                f"INC-{num} ({date}, {svc}): {title}. Impact: {impact}.",
                [
                    link("affected", f"svc:{svc}", required=True),
                    link("handled-under", "practice:postmortem-policy", at="logical"),
                ],
                [
                    {
                        "uri": f"{WIKI}/postmortems/INC-{num}",
                        "version": "final",
                        "range": {"start": 1, "end": 12, "unit": "line"},
                    }
                ],
            )
        )
    for svc, num, title, decision, why, sup in ADRS:
        links = [link("decides-for", f"svc:{svc}", required=True)]
        b2.append(
            create(
                f"adr:{num}",
                f"ADR-{num:03d} ({svc}, {title}): {decision}, because {why}.",
                links,
                [
                    {
                        "uri": f"{GIT}/{svc}/docs/adr/{num:04d}-{slug(title)}.md",
                        "version": "main",
                        "range": {"start": 1, "end": 40, "unit": "line"},
                    }
                ],
            )
        )
    # ---- batch 3: incident details, runbooks, ADR ↔ incident links, supersedes
    b3: list[dict[str, Any]] = []
    for num, date, svc, title, impact, trigger, cause, detect, fix, actions in INCIDENTS:
        b3.append(
            create(
                f"inc:{num}:trigger",
                f"INC-{num} trigger: {trigger}.",
                [link("trigger-of", f"inc:{num}", required=True)],
            )
        )
        b3.append(
            create(
                f"inc:{num}:cause",
                f"INC-{num} root cause: {cause}.",
                [
                    link("root-cause-of", f"inc:{num}", required=True),
                    link("caused-by", f"inc:{num}:trigger"),
                ],
            )
        )
        b3.append(
            create(
                f"inc:{num}:detect",
                f"INC-{num} detection: {detect}.",
                [link("detection-of", f"inc:{num}", required=True)],
            )
        )
        b3.append(
            create(
                f"inc:{num}:fix",
                f"INC-{num} mitigation: {fix}.",
                [link("mitigation-of", f"inc:{num}", required=True)],
            )
        )
        for i, action in enumerate(actions, 1):
            b3.append(
                create(
                    f"inc:{num}:action{i}",
                    f"INC-{num} follow-up {i}: {action}.",
                    [
                        link("follow-up-of", f"inc:{num}", required=True),
                        link("addresses", f"inc:{num}:cause"),
                    ],
                )
            )
    for svc, title, steps in RUNBOOKS:
        b3.append(
            create(
                f"rb:{svc}:{slug(title)}",
                f"Runbook {svc} / {title}: {steps}",
                [
                    link("operates", f"svc:{svc}", required=True),
                    link("follows-standard", "practice:runbook-standard", at="logical"),
                ],
                [
                    {
                        "uri": f"{WIKI}/runbooks/{svc}/{slug(title)}",
                        "version": "2026-09",
                        "range": {"start": 3, "end": 20, "unit": "line"},
                    }
                ],
            )
        )
    motivated = {
        11: 2041,
        14: 2107,
        23: 2188,
        21: 2230,
        16: 2264,
        18: 2301,
        27: 2339,
        32: 2377,
        10: 2410,
        30: 2455,
        12: 2490,
        17: 2150,
    }
    for num, date, svc, title, impact, trigger, cause, detect, fix, actions in INCIDENTS:
        start = 9 * 60 + (num * 37) % 480  # a made-up but fixed start time per incident
        for j, (delay, what) in enumerate(
            (
                (0, "the first symptom"),
                (num % 13 + 4, "the first page"),
                (num % 53 + 20, "mitigation complete"),
            )
        ):
            t = start + delay
            b3.append(
                create(
                    f"inc:{num}:t{j}",
                    f"INC-{num} timeline {date} {t // 60:02d}:{t % 60:02d} UTC: {what}.",
                    [link("timeline-of", f"inc:{num}", required=True)]
                    + ([link("after", f"inc:{num}:t{j - 1}")] if j else []),
                )
            )
    for name, (squad, rotation) in OWNERS.items():
        b3.append(
            create(
                f"owner:{name}",
                f"{name} is owned by the {squad} squad; pages go to the {rotation} rotation.",
                [
                    link("owner-of", f"svc:{name}", required=True),
                    link("follows", "practice:on-call-rotation", at="logical"),
                ],
            )
        )
    for name, metrics in METRICS.items():
        for metric, meaning in metrics:
            b3.append(
                create(
                    f"metric:{name}:{metric}",
                    f"The {name} metric {metric} {meaning}.",
                    [
                        link("metric-of", f"svc:{name}", required=True),
                        link("measures", f"slo:{name}"),
                    ],
                )
            )
    for (src, dst), how in INTERFACES.items():
        b3.append(
            create(
                f"iface:{src}:{dst}",
                f"{src} calls {dst} {how}.",
                [
                    link("interface-of", f"svc:{src}", required=True),
                    link("calls", f"svc:{dst}", required=True),
                ],
            )
        )
    # ---- batch 4 (revisions): resolved by the loader against batch 1-3 ids
    revisions: list[dict[str, Any]] = []
    for name, (_, revised) in SLOS.items():
        if revised:
            revisions.append(
                {
                    "local": f"slo:{name}",
                    "text": f"The SLO of {name}: {revised}.",
                    "links": [
                        link("slo-of", f"svc:{name}", required=True),
                        link("uses-term", "term:slo", at="logical"),
                    ],
                }
            )
    for adr, inc in motivated.items():
        svc, num, title, decision, why, _ = next(a for a in ADRS if a[1] == adr)
        revisions.append(
            {
                "local": f"adr:{adr}",
                "text": f"ADR-{num:03d} ({svc}, {title}): {decision}, because {why}. Accepted after INC-{inc}.",
                "links": [
                    link("decides-for", f"svc:{svc}", required=True),
                    link("motivated-by", f"inc:{inc}"),
                    link("closes", f"inc:{inc}:action1"),
                ],
                "sources": [
                    {
                        "uri": f"{GIT}/{svc}/docs/adr/{num:04d}-{slug(title)}.md",
                        "version": "main",
                        "range": {"start": 1, "end": 48, "unit": "line"},
                    }
                ],
            }
        )
    for svc, num, title, decision, why, sup in ADRS:
        earlier = next((r for r in revisions if r["local"] == f"adr:{num}"), None)
        if sup is not None and earlier is not None:
            earlier["text"] += f" It supersedes ADR-{sup:03d}."
            earlier["links"].append(link("supersedes", f"adr:{sup}"))
        elif sup is not None:
            revisions.append(
                {
                    "local": f"adr:{num}",
                    "text": f"ADR-{num:03d} ({svc}, {title}): {decision}, because {why}. It supersedes ADR-{sup:03d}.",
                    "links": [
                        link("decides-for", f"svc:{svc}", required=True),
                        link("supersedes", f"adr:{sup}"),
                    ],
                }
            )
    revisions.append(
        {
            "local": "inc:2230:cause",
            "text": "INC-2230 root cause: the scratch disk filled up with rotated debug logs, "
            "because the migration had disabled the nightly rotation job, and the worker "
            "crashed mid-file.",
            "links": [
                link("root-cause-of", "inc:2230", required=True),
                link("caused-by", "inc:2230:trigger"),
            ],
            "cite_stored": {"local": "inc:2230:trigger", "unit": "char", "start": 0, "end": 40},
        }
    )
    # ---- batch 5 (retirements): superseded ADRs and a decommissioned runbook
    retire = [
        "adr:2",
        "adr:28",
        "rb:notification-service:purge-a-notification-backlog",
        "practice:deploy-freeze",
        "term:dry-run",
    ]
    # ---- the second subject
    partner = [
        create(f"orion:{i}", text, [link("about", "orion:0")] if i else [])
        for i, text in enumerate(PARTNER)
    ]
    return {
        "subject": "demo",
        "idempotencyKey": "team-corpus-v1",
        "batches": [b1, b2, b3],
        "revisions": revisions,
        "retire": retire,
        "atomise": {
            "id": "retro:2026q3",
            "text": RETRO,
            "maxAtomTokens": 50,
            "links": [link("about", "practice:postmortem-policy")],
        },
        "partner": {"subject": "demo-partner", "changes": partner},
    }


def main() -> None:
    doc = build()
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    atoms = sum(len(b) for b in doc["batches"]) + 1
    print(
        f"wrote {OUT}: {atoms} atoms in subject demo, {len(doc['partner']['changes'])} in "
        f"{doc['partner']['subject']}, {len(doc['revisions'])} revisions, "
        f"{len(doc['retire'])} retirements"
    )


if __name__ == "__main__":
    main()
