"""All configuration, read from ``GRAPHSVC_*`` environment variables.

This is the only module that reads the environment (``JAVA_HOME`` included, as
``java_home``) and the only one that writes it (the model libraries' offline flags,
:func:`offline_model_environment`). Every value has a safe
default (SPEC §15); ``Settings.from_env()`` validates and returns a frozen object
that the rest of the code receives explicitly.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from graphsvc.errors import InvalidInputError

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    Section = TypeVar("Section", bound=DataclassInstance)

__all__ = ["Settings", "default_cache_dir", "default_state_dir", "offline_model_environment"]

# Set for the Hugging Face libraries before the embedding model loads: no code path
# may reach a model hub, and the tokenizers' own threads stay off (embed/sentence.py).
# A value already in the environment is kept.
_MODEL_LIBRARY_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


def default_cache_dir() -> Path:
    """Where downloaded Neo4j jars live: outside any clone, shared by all of them."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "graphsvc"


def default_state_dir() -> Path:
    """Where the managed Neo4j keeps its data, logs and pid file."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "graphsvc"


def offline_model_environment() -> None:
    """Put the offline flags of the model libraries into the process environment.

    The one place graphsvc writes the environment: the Hugging Face libraries read
    these variables themselves, so they must be set before the model loads.
    """
    for name, value in _MODEL_LIBRARY_ENV.items():
        os.environ.setdefault(name, value)


@dataclass(frozen=True)
class Settings:
    """Every tunable of graphsvc. Field ``x_y`` is read from ``GRAPHSVC_X_Y``."""

    # Neo4j; an empty URI means "start the managed local Neo4j".
    neo4j_uri: str = ""
    neo4j_user: str = "neo4j"
    neo4j_password: str = ""
    neo4j_database: str = "neo4j"
    neo4j_port: int = 7687
    # The Neo4j the managed launcher fetches (a Maven version or range): pinned to the
    # release the suite is tested on, so a fresh machine runs what CI ran.
    neo4j_version_range: str = "[5.26.30]"
    neo4j_heap: str = "1g"
    neo4j_pagecache: str = "512m"
    neo4j_start_timeout_s: float = 120.0
    # Outages (docs/operations.md): an unreachable Neo4j answers STORE_UNAVAILABLE
    # within about connect + retry time instead of the driver's 30 s retry loop.
    neo4j_connection_timeout_s: float = 1.0
    neo4j_acquisition_timeout_s: float = 2.0
    neo4j_max_retry_time_s: float = 0.5
    # Deadlocks and other transient errors are retried this long (within the
    # request's deadline); a lost connection is not (see neo4j_max_retry_time_s).
    neo4j_transient_retry_s: float = 10.0
    # Connections of this process: the worker pool + Database.soon's 8 side threads
    # + readiness checks must fit, or requests wait for a connection.
    neo4j_max_pool_size: int = 64
    cache_dir: Path = field(default_factory=default_cache_dir)
    state_dir: Path = field(default_factory=default_state_dir)

    # HTTP
    host: str = "127.0.0.1"
    port: int = 8000
    auth_file: str = ""
    # `graphsvc mcp` (stdio): the API token of the auth file the process acts as
    # (docs/agents.md); `--token` overrides it.
    mcp_token: str = field(default="", repr=False)
    key_file: str = ""
    secret_file: str = ""
    # `graphsvc search`, `read` and `inspect` ask a running `graphsvc serve` at this URL
    # over HTTP instead of opening the database (docs/cli.md, "A running server"); the
    # commands' `--server` overrides it, `--server ''` opens the database. The token is
    # `server_token`, else the entry of the auth file (`auth_file`, else serve's demo
    # file) whose subject, policy and actor kind are the command's binding flags.
    server_url: str = ""
    server_token: str = field(default="", repr=False)
    # Threads that run resolvers (asyncio.to_thread); /healthz needs none, /readyz
    # has its own. Each holds at most one Neo4j connection plus side work.
    worker_threads: int = 16
    # Processes of `graphsvc serve` (--workers), each with its threads, model and pool.
    serve_workers: int = 1
    # Garbage collector of a serving process (graphsvc/api/gc_policy.py): "frozen"
    # keeps the startup heap (the model) out of every collection; "default" is
    # CPython's collector unchanged.
    gc_policy: str = "frozen"
    # Seconds a client is told to wait (Retry-After) when Neo4j is unavailable.
    retry_after_s: int = 2
    # "json" (one object per line) or "text"; level as in logging.
    log_format: str = "json"
    log_level: str = "INFO"

    # Host layer
    curator: str = "none"
    ollama_url: str = "http://127.0.0.1:11434"
    ollama_model: str = "gemma3:4b"

    # Limits (SPEC §15)
    max_batch_changes: int = 256
    max_body_bytes: int = 65_536
    max_links_per_atom: int = 128
    max_sources_per_atom: int = 128
    max_write_bytes: int = 2 * 1024 * 1024
    max_request_bytes: int = 4 * 1024 * 1024
    # What one GraphQL document may ask for (graphsvc/api/document_limits.py, all
    # measured in time linear in the document, before it is validated): field depth;
    # tokens and bracket nesting of the text; fragments spreading fragments; aliases and
    # fields once fragments are spread; nesting of the request's JSON.
    max_query_depth: int = 12
    max_query_tokens: int = 20_000
    max_query_nesting: int = 64
    max_fragment_depth: int = 16
    max_query_aliases: int = 30
    max_query_fields: int = 10_000
    max_json_depth: int = 64
    # The request's cost budget (docs/operations.md, "Request limits"): the objects its
    # answer may hold (a connection's subtree times its `first`) plus what each root
    # field costs from its arguments (a read's budget, limit and depth, ...).
    max_query_cost: int = 250_000
    graph_first_default: int = 20
    graph_first_max: int = 100
    request_timeout_s: float = 30.0
    token_lifetime_s: int = 300
    cursor_lifetime_s: int = 300
    receipt_lifetime_s: int = 3600
    # Read manifests (observation records) are kept this long for observe/recordUse.
    manifest_lifetime_s: int = 86_400

    # Ranking / read (SPEC §5, §15)
    search_limit: int = 10
    read_limit: int = 24
    inspect_limit: int = 20
    max_limit: int = 10_000
    read_budget: int = 4096
    max_read_budget: int = 1_000_000
    depth: int = 2
    max_depth: int = 32
    max_seeds: int = 64
    max_nodes: int = 512
    max_edges: int = 4096
    evaluation_work: int = 500_000
    packing_work: int = 2_000_000
    beta: float = 0.3
    # 0.3 with the entity index and in-fan link weighting (docs/search-quality.md, "The
    # entity index in ranking"); it was 0.1 before the index, not the reference
    # implementation's 0.5 (graphsvc.core.activation keeps that as DEFAULT_PROPAGATION,
    # ACT-7's worked check): with every declared link weighing 1, 0.5 let the
    # neighbours of weak matches crowd out the evidence on LoCoMo (recall@5 0.534 vs
    # 0.592 at 0.1). GRAPHSVC_PROPAGATION=0.5 restores the reference behaviour.
    propagation: float = 0.3
    convergence_tol: float = 1e-6
    # Each index is asked for max_seeds × this many hits, then filtered by subject.
    # Vector recall@64 against an exact scan at 100k atoms: 0.948 with k=64, 0.971
    # with k=128, 0.972 with k=256 (quantised HNSW); k=128 costs ~20 ms, k=256 ~25 ms.
    candidate_oversample: int = 2
    # "role=forward:reverse,role2=forward:reverse"; unknown roles use 1:1 (ACT-7).
    role_weights: str = ""
    # How a link's role weight is divided by the fan of its role around it in the
    # retrieval graph (graphsvc.core.activation.build_edges): "role" (none, ACT-7),
    # "out", "in" or "sym" (docs/search-quality.md).
    link_weighting: str = "in"
    # Neighbouring query terms are also asked as a sloppy phrase with this slop (0:
    # off; graphsvc.core.lucene.fulltext_query): a body holding two query words close
    # together scores higher (LoCoMo recall@10 +0.016 at slop 3, docs/search-quality.md).
    lexical_proximity: int = 3
    # The lexical signal's BM25 statistics (graphsvc.core.bm25, docs/search-quality.md):
    # "subject" scores each candidate with its subject's own body count, average length
    # and term document frequencies, so a subject's ranking does not depend on other
    # subjects' data; "index" keeps Lucene's score (statistics of the whole index).
    lexical_statistics: str = "subject"
    # ... for subjects of at most this many current bodies: reading the statistics is
    # linear in the subject's size; a larger subject keeps Lucene's index-wide ones
    # (it dominates them anyway; diagnostics `lexicalStatistics: index`).
    lexical_statistics_max: int = 10_000
    # "max": lexical = score / best score among the candidates; "bound": score / the
    # query's BM25 upper bound (needs lexical_statistics=subject).
    lexical_normalisation: str = "max"
    # How many of the subject's top Lucene hits are scored (0: max_seeds); the best
    # max_seeds of them by the subject's own BM25 become the lexical candidates.
    lexical_pool: int = 256
    # "hits": only the lexical candidates get a lexical score; "candidates": every
    # candidate whose body is read (the semantic ones too), with subject statistics.
    lexical_scope: str = "candidates"
    # A subject with at most this many current bodies is scanned exactly by the vector
    # leg instead of asking the shared (approximate) index: its semantic candidates are
    # then its own, whatever other subjects hold (0: always the index first).
    vector_exact_max: int = 2000
    # "fallback": ask Lucene for the index's top hits without the subject clause and
    # again with it when too few were the subject's; "first": with the clause at once.
    fulltext_subject_clause: str = "fallback"

    # The entity index (SPEC §16, docs/entities.md): "rules" derives entities from every
    # head's text (graphsvc.core.entity_rules; the database records the extractor's
    # version), "off" keeps no index, and ranking is exactly §5.
    entities: str = "rules"
    # Activation through entities (ENT-4): a head's edge to each entity it mentions
    # weighs entity_weight (a declared link weighs 1); an entity passes what reaches it
    # on to the heads that mention it, evenly, and one mentioned by more than
    # entity_max_degree heads is not traversed at all (it names too much to say
    # anything). An entity the query names (an exact key of one of its word n-grams,
    # graphsvc.core.entity_keys.query_keys) starts with entity_query_weight × the best
    # candidate's base activation. Both weights 0: ranking is exactly §5.
    entity_weight: float = 4.0
    entity_max_degree: int = 32
    entity_query_weight: float = 0.0
    # Derived edges of a second kind, measured and off (docs/search-quality.md): each
    # seed's this many most similar heads by stored embedding, linked with this weight.
    similar_heads: int = 0
    similar_weight: float = 1.0

    # Embedding: the model (graphsvc.embed.models: all-MiniLM-L6-v2 or
    # all-mpnet-base-v2). A database keeps the model its embeddings came from;
    # `graphsvc reembed --model` moves it to another (docs/search-quality.md). An
    # unknown name is refused when the service is built (graphsvc.embed.lazy).
    embedding_model: str = "all-MiniLM-L6-v2"
    # What embeds a search query: "int8", the model's ONNX graph quantised (about a
    # quarter of fp32's time, cosine to it >= 0.99, recall unchanged within noise:
    # bench/query_encoder.py), or "fp32". Bodies are always embedded in fp32.
    query_precision: str = "int8"

    # Disk erasure (docs/erasure.md): the bytes of a finished purge must be gone
    # from the managed Neo4j's files within this many seconds, i.e. `graphsvc
    # compact` runs at least this often; `graphsvc erasure status` reports a purge
    # older than this as overdue.
    erasure_max_delay_s: float = 86_400.0
    # Replicas (ops/replicas.py): how long a `graphsvc serve` registration holds
    # without renewal; after a crash, replicas with other keys wait this long.
    replica_lease_s: float = 30.0
    # Background jobs (the outbox of deferred atomisation and embeddings,
    # store/jobs.py, atomise/worker.py, docs/operations.md): a worker holds a job
    # this long and renews the hold while it runs; a job whose worker died is taken
    # again after it runs out.
    # `graphsvc serve` looks for such jobs every `job_poll_s`; a job is given up
    # (`failed`, `graphsvc jobs retry` puts it back) after `job_max_attempts` claims.
    job_lease_s: float = 60.0
    job_poll_s: float = 5.0
    job_max_attempts: int = 5
    # Bulk import (``graphsvc import``, docs/ingest.md): rows per batch (one
    # transaction each).
    import_batch: int = 2_000

    # Atomisation host layer (SPEC §11): "module:attribute" naming an AtomiseHooks
    # object (or a callable returning one) whose governance hooks run on every
    # atomisation; empty means no configured hooks.
    atomise_hooks: str = ""

    # The JDK that runs the managed Neo4j and the Lucene reader: ``GRAPHSVC_JAVA_HOME``,
    # else the standard ``JAVA_HOME``; empty means ``java`` on PATH.
    java_home: str = ""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Read ``GRAPHSVC_*`` variables, then apply ``overrides``.

        Raises:
            InvalidInputError: a variable does not parse as its field's type.
        """
        source = os.environ if env is None else env
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = source.get("GRAPHSVC_" + f.name.upper())
            if raw is None:
                continue
            values[f.name] = _parse(f.name, str(f.type), raw)
        if "java_home" not in values and source.get("JAVA_HOME"):
            values["java_home"] = source["JAVA_HOME"]
        values.update(overrides)
        settings = cls(**values)
        settings.validate()
        return settings

    def export(self, *names: str) -> None:
        """Put these fields into this process's environment as ``GRAPHSVC_*`` variables,
        for processes it spawns that read their settings from there (``serve
        --workers``)."""
        for name in names:
            os.environ["GRAPHSVC_" + name.upper()] = str(getattr(self, name))

    @property
    def signing_key_path(self) -> Path:
        """Where the deployment's signing key ring lives (SIG-4): ``key_file``, or
        ``signing-key.json`` in the state folder. The one place this is decided."""
        return Path(self.key_file) if self.key_file else self.state_dir / "signing-key.json"

    @property
    def secret_path(self) -> Path:
        """Where the server's MAC secret lives: ``secret_file``, or ``server-secret``
        in the state folder."""
        return Path(self.secret_file) if self.secret_file else self.state_dir / "server-secret"

    def section(self, cls: type[Section], **given: Any) -> Section:
        """The dataclass ``cls`` (a use case's limits) with every field that names a
        setting taken from it; ``given`` supplies the others (computed or renamed).
        A field that is neither has to have a default, else construction fails."""
        known = {f.name for f in fields(self)}
        taken = {
            f.name: getattr(self, f.name)
            for f in fields(cls)
            if f.init and f.name in known and f.name not in given
        }
        return cls(**taken, **given)

    def with_(self, **changes: Any) -> Settings:
        """A copy with some fields changed."""
        return replace(self, **changes)

    def validate(self) -> None:
        """Reject values that would make the service unsafe or meaningless.

        Raises:
            InvalidInputError: a value is out of range.
        """
        if not 0.0 <= self.propagation < 1.0:
            raise InvalidInputError("GRAPHSVC_PROPAGATION must be in [0, 1)")
        if not 0 <= self.lexical_proximity <= 32:
            raise InvalidInputError("GRAPHSVC_LEXICAL_PROXIMITY must be in 0..32")
        if self.lexical_statistics not in {"subject", "index"}:
            raise InvalidInputError("GRAPHSVC_LEXICAL_STATISTICS must be subject or index")
        if self.lexical_normalisation not in {"max", "bound"}:
            raise InvalidInputError("GRAPHSVC_LEXICAL_NORMALISATION must be max or bound")
        if self.lexical_scope not in {"hits", "candidates"}:
            raise InvalidInputError("GRAPHSVC_LEXICAL_SCOPE must be hits or candidates")
        if self.fulltext_subject_clause not in {"first", "fallback"}:
            raise InvalidInputError("GRAPHSVC_FULLTEXT_SUBJECT_CLAUSE must be first or fallback")
        if self.lexical_statistics_max < 0:
            raise InvalidInputError("GRAPHSVC_LEXICAL_STATISTICS_MAX must be >= 0")
        if self.vector_exact_max < 0:
            raise InvalidInputError("GRAPHSVC_VECTOR_EXACT_MAX must be >= 0")
        if not 0 <= self.lexical_pool <= 4096:
            raise InvalidInputError("GRAPHSVC_LEXICAL_POOL must be in 0..4096")
        if not 0 <= self.graph_first_default <= self.graph_first_max:
            raise InvalidInputError("GRAPHSVC_GRAPH_FIRST_DEFAULT must be in 0..graph_first_max")
        if self.link_weighting not in {"role", "out", "in", "sym"}:
            raise InvalidInputError("GRAPHSVC_LINK_WEIGHTING must be role, out, in or sym")
        if self.entities not in {"rules", "off"}:
            raise InvalidInputError("GRAPHSVC_ENTITIES must be rules or off")
        for name in ("entity_weight", "entity_query_weight"):
            value = getattr(self, name)
            if not 0.0 <= value <= 100.0:  # NaN fails too
                raise InvalidInputError(f"GRAPHSVC_{name.upper()} must be in [0, 100]")
        if not 0 <= self.similar_heads <= 64:
            raise InvalidInputError("GRAPHSVC_SIMILAR_HEADS must be in 0..64")
        if not 0.0 <= self.similar_weight <= 100.0:  # NaN fails too
            raise InvalidInputError("GRAPHSVC_SIMILAR_WEIGHT must be in [0, 100]")
        if self.entity_max_degree < 1:
            raise InvalidInputError("GRAPHSVC_ENTITY_MAX_DEGREE must be positive")
        if self.query_precision not in {"int8", "fp32"}:
            raise InvalidInputError("GRAPHSVC_QUERY_PRECISION must be int8 or fp32")
        if self.curator not in {"none", "rule", "ollama"}:
            raise InvalidInputError("GRAPHSVC_CURATOR must be none, rule or ollama")
        if not self.erasure_max_delay_s > 0:  # NaN fails too
            raise InvalidInputError("GRAPHSVC_ERASURE_MAX_DELAY_S must be positive")
        if self.gc_policy not in {"frozen", "default"}:
            raise InvalidInputError("GRAPHSVC_GC_POLICY must be frozen or default")
        if self.server_url and not self.server_url.startswith(("http://", "https://")):
            raise InvalidInputError("GRAPHSVC_SERVER_URL must start with http:// or https://")
        if self.log_format not in {"json", "text"}:
            raise InvalidInputError("GRAPHSVC_LOG_FORMAT must be json or text")
        for name in (
            "max_batch_changes",
            "max_body_bytes",
            "read_budget",
            "max_nodes",
            "worker_threads",
            "neo4j_max_pool_size",
            "request_timeout_s",
            "neo4j_connection_timeout_s",
            "neo4j_acquisition_timeout_s",
            "max_query_cost",
            "max_query_depth",
            "max_query_tokens",
            "max_query_nesting",
            "max_fragment_depth",
            "max_query_aliases",
            "max_query_fields",
            "max_json_depth",
            "graph_first_max",
            "replica_lease_s",
            "job_lease_s",
            "job_poll_s",
            "job_max_attempts",
        ):
            if getattr(self, name) <= 0:
                raise InvalidInputError(f"GRAPHSVC_{name.upper()} must be positive")

    @property
    def managed_neo4j(self) -> bool:
        """True when graphsvc must start its own local Neo4j."""
        return not self.neo4j_uri


def _parse(name: str, type_name: str, raw: str) -> Any:
    try:
        if type_name == "int":
            return int(raw)
        if type_name == "float":
            return float(raw)
        if type_name == "Path":
            return Path(raw).expanduser()

        return raw
    except ValueError as exc:
        raise InvalidInputError(
            f"GRAPHSVC_{name.upper()}={raw!r} is not a valid {type_name}"
        ) from exc
