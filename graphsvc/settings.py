"""All configuration, read from ``GRAPHSVC_*`` environment variables.

This is the only module that reads the environment (``JAVA_HOME`` included, as
``java_home``) and the only one that writes it (the model libraries' offline flags,
:func:`offline_model_environment`). Every value has a safe
default (SPEC §15); ``Settings.from_env()`` validates and returns a frozen object
that the rest of the code receives explicitly.

Settings come in sections (``settings.neo4j``, ``settings.ranking``, ...), each a
frozen dataclass that a use case can take as it is. A field's annotation says what
it accepts: its type, its choices (``Literal``) and its range (:class:`Range`); one
check reads them (no hand-written checks per field). The environment stays flat:
every field has one name, ``GRAPHSVC_<NAME>``: the section's ``prefix`` and the
field's name (``neo4j.uri`` is ``GRAPHSVC_NEO4J_URI``), or the name the field gives
(:func:`named`). :data:`NAMES` maps each name to its section and field; the
environment reader, :meth:`Settings.with_` and :meth:`Settings.export` all go
through it.

The sections are plain dataclasses, not pydantic models: `graphsvc search` through
a running server imports no pydantic (docs/cli.md, "A running server"), and every
command reads its settings first.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    ClassVar,
    Literal,
    TypeVar,
    get_args,
    get_origin,
    get_type_hints,
)

from graphsvc.errors import InvalidInputError

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    Projection = TypeVar("Projection", bound=DataclassInstance)

__all__ = [
    "ENTITY_WEIGHTS_OFF",
    "EXPERIMENTAL",
    "EXPERIMENTAL_NAMES",
    "NAMES",
    "AtomiseSettings",
    "ClientSettings",
    "EmbeddingSettings",
    "GraphQLSettings",
    "HttpSettings",
    "JobSettings",
    "LifetimeSettings",
    "Neo4jSettings",
    "OperationsSettings",
    "PathSettings",
    "RankingSettings",
    "ReadSettings",
    "Settings",
    "WriteSettings",
    "default_cache_dir",
    "default_state_dir",
    "fill",
    "offline_model_environment",
]

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
class Range:
    """The range of a numeric setting (``Annotated[int, Range(ge=0, le=32)]``); NaN
    is outside every range."""

    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None

    def holds(self, value: float) -> bool:
        return (
            (self.ge is None or value >= self.ge)
            and (self.gt is None or value > self.gt)
            and (self.le is None or value <= self.le)
            and (self.lt is None or value < self.lt)
        )

    def describe(self, integral: bool) -> str:
        """What a value must be, as the error says it."""
        if self.gt == 0 and self.le is None and self.lt is None:
            return "positive"
        if self.le is None and self.lt is None:
            return f">= {self.ge:g}"
        if integral:
            return f"in {self.ge:g}..{self.le:g}"
        upper = f"{self.le:g}]" if self.le is not None else f"{self.lt:g})"
        return f"in [{self.ge or 0:g}, {upper}"


Positive = Annotated[int, Range(gt=0)]
PositiveFloat = Annotated[float, Range(gt=0)]
Weight = Annotated[float, Range(ge=0.0, le=100.0)]


# The metadata of a field that switches on an experiment measured and not kept (its
# default is the shipped behaviour): :data:`EXPERIMENTAL_NAMES` lists them, and
# docs/configuration.md's "Experimental ranking settings" documents them apart.
EXPERIMENTAL: Mapping[str, bool] = MappingProxyType({"experimental": True})


def named(name: str) -> dict[str, str]:
    """The metadata of a field whose setting has its own ``name`` (not the section's
    prefix + the field's name)."""
    return {"name": name}


@dataclass(frozen=True)
class Section:
    """One section of the settings: frozen, every value checked against its
    annotation when it is built."""

    # Prefix of the settings' names (``neo4j_``: ``uri`` is ``GRAPHSVC_NEO4J_URI``).
    prefix: ClassVar[str] = ""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            _check_value(type(self), f.name, getattr(self, f.name))
        self.check()

    def check(self) -> None:
        """Checks across fields (the per-field ones come from the annotations)."""


@dataclass(frozen=True)
class Neo4jSettings(Section):
    """The Neo4j graphsvc talks to (``GRAPHSVC_NEO4J_*``); an empty URI means "start
    the managed local Neo4j"."""

    prefix: ClassVar[str] = "neo4j_"

    uri: str = ""
    user: str = "neo4j"
    password: str = ""
    database: str = "neo4j"
    # Bolt port of the managed Neo4j.
    port: int = 7687
    # The Neo4j the managed launcher fetches (a Maven version or range): pinned to the
    # release the suite is tested on, so a fresh machine runs what CI ran.
    version_range: str = "5.26.31"
    heap: str = "1g"
    pagecache: str = "512m"
    start_timeout_s: float = 120.0
    # Outages (docs/operations.md): an unreachable Neo4j answers STORE_UNAVAILABLE
    # within about connect + retry time instead of the driver's 30 s retry loop.
    connection_timeout_s: PositiveFloat = 1.0
    acquisition_timeout_s: PositiveFloat = 2.0
    max_retry_time_s: float = 0.5
    # Deadlocks and other transient errors are retried this long (within the
    # request's deadline); a lost connection is not (see max_retry_time_s).
    transient_retry_s: float = 10.0
    # Connections of this process: the worker pool + Database.soon's 8 side threads
    # + readiness checks must fit, or requests wait for a connection.
    max_pool_size: Positive = 64

    @property
    def managed(self) -> bool:
        """True when graphsvc must start its own local Neo4j."""
        return not self.uri


@dataclass(frozen=True)
class PathSettings(Section):
    """Files and folders of this machine: caches, state, the JDK, keys and tokens."""

    cache_dir: Path = field(default_factory=default_cache_dir)
    state_dir: Path = field(default_factory=default_state_dir)
    # The JDK that runs the managed Neo4j and the Lucene reader: ``GRAPHSVC_JAVA_HOME``,
    # else the standard ``JAVA_HOME``; empty means ``java`` on PATH.
    java_home: str = ""
    # API tokens → bindings (SPEC API-2); empty: `serve` writes demo tokens.
    auth_file: str = ""
    key_file: str = ""
    secret_file: str = ""

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


@dataclass(frozen=True)
class HttpSettings(Section):
    """The serving process: its listener, threads, request bounds and logs."""

    host: str = "127.0.0.1"
    port: int = 8000
    # Threads that run resolvers (asyncio.to_thread); /healthz needs none, /readyz
    # has its own. Each holds at most one Neo4j connection plus side work.
    worker_threads: Positive = 16
    # Processes of `graphsvc serve` (--workers), each with its threads, model and pool.
    serve_workers: int = 1
    # Garbage collector of a serving process (graphsvc/http/gc_policy.py): "frozen"
    # keeps the startup heap (the model) out of every collection; "default" is
    # CPython's collector unchanged.
    gc_policy: Literal["frozen", "default"] = "frozen"
    # glibc malloc arenas of a serving process (graphsvc/http/gc_policy.py): 2 keeps
    # memory freed by one resolver thread reusable by the others; 0 is glibc's
    # default (8 per core).
    malloc_arenas: int = 2
    # BLAS threads of a serving process (graphsvc/http/blas_threads.py): 1 stops
    # OpenBLAS's idle threads spinning on the cores Neo4j needs; 0 is the library's
    # default (one per core).
    blas_threads: int = 1
    # The serving process's event loop and HTTP/1.1 parser: "uvloop" (libuv's loop,
    # httptools' C parser), "asyncio" (the standard library's loop, h11 in pure
    # Python) or "auto" (uvloop where it is installed: not on Windows). Every request
    # passes through both on the one loop thread that also answers `{ health }`
    # (docs/performance.md, "The event loop and the HTTP parser").
    http_runtime: Literal["auto", "uvloop", "asyncio"] = "auto"
    # Seconds an idle keep-alive connection stays open (uvicorn's default is 5): an
    # agent host that thinks between calls keeps its connection, and a client that
    # sends on a connection the server is closing (a reset, which a client need not
    # retry for a POST) meets that race less often.
    keep_alive_s: Annotated[int, Range(gt=0, le=3600)] = 30
    # Seconds a client is told to wait (Retry-After) when Neo4j is unavailable.
    retry_after_s: int = 2
    max_request_bytes: int = 4 * 1024 * 1024
    # Timeout of a request and of each Neo4j transaction.
    request_timeout_s: PositiveFloat = 30.0
    # Seconds a client has to send a request's head (from the connection opening or
    # the request's first byte) and then its body; one that misses either is answered
    # 408 and disconnected (a slowloris: graphsvc/http/read_deadline.py).
    read_head_timeout_s: PositiveFloat = 5.0
    read_body_timeout_s: PositiveFloat = 10.0
    # "json" (one object per line) or "text"; level as in logging.
    log_format: Literal["json", "text"] = "json"
    log_level: str = "INFO"
    # Benchmarks only: CPU per request by operation and stage in /metrics
    # (graphsvc/telemetry/stages.py, bench/load.py --stages); off, nothing is timed.
    stage_timer: Literal["off", "on"] = "off"


@dataclass(frozen=True)
class ClientSettings(Section):
    """graphsvc as a client of a running `graphsvc serve`."""

    # `graphsvc search`, `read` and `inspect` ask a running `graphsvc serve` at this URL
    # over HTTP instead of opening the database (docs/cli.md, "A running server"); the
    # commands' `--server` overrides it, `--server ''` opens the database. The token is
    # `server_token`, else the entry of the auth file (`auth_file`, else serve's demo
    # file) whose subject, policy and actor kind are the command's binding flags.
    server_url: str = ""
    server_token: str = field(default="", repr=False)
    # `graphsvc mcp` (stdio): the API token of the auth file the process acts as
    # (docs/agents.md); `--token` overrides it.
    mcp_token: str = field(default="", repr=False)
    # The MCP tools listed to a token (docs/agents.md, "Tools"): "compact" (search,
    # read, remember, inspect, entities, status) or "full" (every tool the token's
    # capabilities allow); `graphsvc mcp --profile` overrides it.
    mcp_profile: Literal["compact", "full"] = "compact"
    # An MCP session (SPEC §17, MCP-1) ends after this many idle seconds; its window
    # keeps at most this many presentations (most recent first).
    mcp_session_idle_s: Annotated[float, Range(gt=0, le=7 * 24 * 3600)] = 1800.0
    mcp_session_window: Annotated[int, Range(ge=1, le=1024)] = 256

    def check(self) -> None:
        if self.server_url and not self.server_url.startswith(("http://", "https://")):
            raise InvalidInputError("GRAPHSVC_SERVER_URL must start with http:// or https://")


@dataclass(frozen=True)
class AtomiseSettings(Section):
    """Atomisation's host layer (SPEC §11): the curator and the governance hooks."""

    curator: Literal["none", "rule", "ollama"] = "none"
    ollama_url: str = "http://127.0.0.1:11434"
    ollama_model: str = "gemma3:4b"
    # "module:attribute" naming an AtomiseHooks object (or a callable returning one)
    # whose governance hooks run on every atomisation; empty means no configured hooks.
    hooks: str = field(default="", metadata=named("atomise_hooks"))


@dataclass(frozen=True)
class WriteSettings(Section):
    """The limits of one write (SPEC §15), as :class:`graphsvc.core.write_plan.Limits`
    names them."""

    max_changes: Positive = field(default=256, metadata=named("max_batch_changes"))
    max_body_bytes: Positive = 65_536
    max_links: int = field(default=128, metadata=named("max_links_per_atom"))
    max_sources: int = field(default=128, metadata=named("max_sources_per_atom"))
    max_write_bytes: int = 2 * 1024 * 1024


@dataclass(frozen=True)
class GraphQLSettings(Section):
    """What one GraphQL request may ask for (graphsvc/api/document_limits.py, all
    measured in time linear in the document, before it is validated): field depth;
    tokens and bracket nesting of the text; fragments spreading fragments; aliases and
    fields once fragments are spread; nesting of the request's JSON; and the pages
    of the typed graph."""

    max_query_depth: Positive = 12
    max_tokens: Positive = field(default=20_000, metadata=named("max_query_tokens"))
    max_nesting: Positive = field(default=64, metadata=named("max_query_nesting"))
    max_fragment_depth: Positive = 16
    max_aliases: Positive = field(default=30, metadata=named("max_query_aliases"))
    max_fields: Positive = field(default=10_000, metadata=named("max_query_fields"))
    max_json_depth: Positive = 64
    # A request of at most this many bytes (body, query string, Authorization) whose
    # document the front door parsed and validated before is checked on the event
    # loop instead of its thread pool (graphsvc/http/front_door.py); 0: never.
    front_door_inline_bytes: Annotated[int, Range(ge=0, le=65_536)] = 4096
    # A request without a token may carry at most this many bytes (body and query
    # string): more is 401 before anything is decoded or lexed. Without a token only
    # `health` and introspection run, and GraphiQL's introspection is about 2 KiB.
    anonymous_max_bytes: Annotated[int, Range(ge=0, le=1_048_576)] = 16_384
    # Requests the front door's threads may hold (running or waiting) at once; one
    # more is answered 503 with Retry-After. Requests without a token may hold at
    # most half of them.
    front_door_queue: Annotated[int, Range(ge=2, le=100_000)] = 64
    # The request's cost budget (docs/operations.md, "Request limits"): the objects its
    # answer may hold (a connection's subtree times its `first`) plus what each root
    # field costs from its arguments (a read's budget, limit and depth, ...).
    max_cost: Positive = field(default=250_000, metadata=named("max_query_cost"))
    # A connection's default and largest page size.
    default_first: int = field(default=20, metadata=named("graph_first_default"))
    max_first: Positive = field(default=100, metadata=named("graph_first_max"))

    def check(self) -> None:
        if not 0 <= self.default_first <= self.max_first:
            raise InvalidInputError("GRAPHSVC_GRAPH_FIRST_DEFAULT must be in 0..graph_first_max")


@dataclass(frozen=True)
class ReadSettings(Section):
    """Defaults and largest values of search, read and inspect (SPEC §5, §15)."""

    search_limit: int = 10
    read_limit: int = 24
    inspect_limit: int = 20
    max_limit: int = 10_000
    read_budget: Positive = 4096
    max_read_budget: int = 1_000_000
    depth: int = 2


@dataclass(frozen=True)
class RankingSettings(Section):
    """What an evaluation's ranking depends on (SPEC §5, §15, §16): the retrieval
    graph's bounds, the fusion of its signals and the activation solve."""

    max_depth: int = 32
    max_seeds: int = 64
    max_nodes: Positive = 512
    max_edges: int = 4096
    evaluation_work: int = 500_000
    packing_work: int = 2_000_000
    beta: float = 0.3
    # 0.3 with the entity index and in-fan link weighting (docs/search-quality.md, "The
    # entity index in ranking"); it was 0.1 before the index, not the reference
    # implementation's 0.5 (graphsvc.core.activation keeps that as DEFAULT_PROPAGATION,
    # ACT-7's worked check): with every declared link weighing 1, 0.5 let the
    # neighbours of weak matches crowd out the evidence on LoCoMo (docs/performance.md,
    # "Ranking levers"). GRAPHSVC_PROPAGATION=0.5 restores the reference behaviour.
    propagation: Annotated[float, Range(ge=0.0, lt=1.0)] = 0.3
    convergence_tol: float = 1e-6
    # Each index is asked for max_seeds × this many hits, then filtered by subject.
    # 2: the approximate index's recall is near its ceiling at twice the seeds, and
    # more costs time for nothing (docs/search-quality.md, "The vector leg").
    candidate_oversample: int = 2
    # "role=forward:reverse,role2=forward:reverse"; unknown roles use 1:1 (ACT-7).
    role_weights: str = ""
    # Neighbouring query terms are also asked as a sloppy phrase with this slop (0:
    # off; graphsvc.core.bm25.fulltext_query): a body holding two query words close
    # together scores higher (docs/performance.md, "Ranking levers").
    lexical_proximity: Annotated[int, Range(ge=0, le=32)] = 3
    # The lexical signal's BM25 statistics (graphsvc.core.bm25, docs/search-quality.md):
    # "subject" scores each candidate with its subject's own body count, average length
    # and term document frequencies, so a subject's ranking does not depend on other
    # subjects' data; "index" keeps Lucene's score (statistics of the whole index).
    lexical_statistics: Literal["subject", "index"] = "subject"
    # ... for subjects of at most this many current bodies: reading the statistics is
    # linear in the subject's size; a larger subject keeps Lucene's index-wide ones
    # (it dominates them anyway; diagnostics `lexicalStatistics: index`).
    lexical_statistics_max: Annotated[int, Range(ge=0)] = 10_000
    # How many of the subject's top Lucene hits are scored (0: max_seeds); the best
    # max_seeds of them by the subject's own BM25 become the lexical candidates.
    lexical_pool: Annotated[int, Range(ge=0, le=4096)] = 256
    # A subject with at most this many current bodies is scanned exactly by the vector
    # leg instead of asking the shared (approximate) index: its semantic candidates are
    # then its own, whatever other subjects hold (0: always the index first).
    vector_exact_max: Annotated[int, Range(ge=0)] = 2000
    # A search of a subject with at most this many current heads answers both
    # candidate legs from the process's mirror of its heads, kept per write generation
    # (graphsvc.process_state.head_mirrors), instead of a fulltext query and a vector scan; the
    # process holds at most four times this many heads over all subjects (0: off).
    head_mirror_max: Annotated[int, Range(ge=0)] = 10_000
    # "fallback": ask Lucene for the index's top hits without the subject clause and
    # again with it when too few were the subject's; "first": with the clause at once.
    fulltext_subject_clause: Literal["first", "fallback"] = "fallback"
    # The entity index (SPEC §16, docs/entities.md): "rules" derives entities from every
    # head's text (graphsvc.core.entity_rules; the database records the extractor's
    # version), "off" keeps no index, and ranking is exactly §5.
    entities: Literal["rules", "off"] = "rules"
    # Activation through entities (ENT-4): a head's edge to each entity it mentions
    # weighs entity_weight (a declared link weighs 1); an entity passes what reaches it
    # on to the heads that mention it, evenly, and one mentioned by more than
    # entity_max_degree heads is not traversed at all (it names too much to say
    # anything). The three entity weights 0 (ENTITY_WEIGHTS_OFF): ranking is exactly §5.
    entity_weight: Weight = 4.0
    entity_max_degree: Positive = 24
    # Anchor entities (pseudo-relevance feedback through the index): each entity
    # mentioned by one of the entity_anchors best-matching candidates (by base
    # activation) and by at least one other head of the retrieval graph starts with
    # entity_anchor_weight × that candidate's base activation (the best such, when
    # several name it), and passes it on like any entity: evenly to the heads that
    # mention it. 0 anchors or weight 0: off. Chosen on the team questions, kept for
    # their gain on LoCoMo (docs/search-quality.md#anchor-entities).
    entity_anchors: Annotated[int, Range(ge=0, le=64)] = 3
    entity_anchor_weight: Weight = 1.0

    # ---- Experimental: measured and switched off. Each default is the shipped
    # ranking; another value turns on an alternative that was measured and not kept
    # (docs/configuration.md, "Experimental ranking settings", links each one's
    # figures). Kept so those figures can be reproduced; not tuned for production.
    # How a link's role weight is divided by the fan of its role around it in the
    # retrieval graph (graphsvc.core.activation.build_edges): "in" ships; "role" (none:
    # ACT-7 as written), "out" and "sym" were measured against it.
    link_weighting: Literal["role", "out", "in", "sym"] = field(default="in", metadata=EXPERIMENTAL)
    # "max" ships: lexical = score / best score among the candidates; "bound": score /
    # the query's BM25 upper bound (needs lexical_statistics=subject).
    lexical_normalisation: Literal["max", "bound"] = field(default="max", metadata=EXPERIMENTAL)
    # "candidates" ships: every candidate whose body is read (the semantic ones too) gets
    # a lexical score, with subject statistics; "hits": only the lexical candidates.
    lexical_scope: Literal["hits", "candidates"] = field(
        default="candidates", metadata=EXPERIMENTAL
    )
    # An entity the query names (a key or alias of one of its word n-grams,
    # graphsvc.core.entity_keys.query_keys, or the one full form a capitalised short
    # form fits, graphsvc.core.entity_resolution.resolve_query) starts with this × the
    # best candidate's base activation (0 ships: off).
    entity_query_weight: Weight = field(default=0.0, metadata=EXPERIMENTAL)
    # Derived edges of a second kind: each seed's this many most similar heads by
    # stored embedding, linked with this weight (0 heads ships: off).
    similar_heads: Annotated[int, Range(ge=0, le=64)] = field(default=0, metadata=EXPERIMENTAL)
    similar_weight: Weight = field(default=1.0, metadata=EXPERIMENTAL)

    def check(self) -> None:
        self.role_table  # noqa: B018  (parsed now: a malformed entry fails at start)

    @functools.cached_property
    def role_table(self) -> Mapping[str, tuple[float, float]]:
        """``role_weights`` parsed: role → (forward, reverse) weight; ``role=w`` is
        ``w:w``.

        Raises:
            InvalidInputError: a malformed entry, or a weight that is not finite and ≥ 0.
        """
        roles: dict[str, tuple[float, float]] = {}
        for part in filter(None, (p.strip() for p in self.role_weights.split(","))):
            role, _, weights = part.partition("=")
            fwd, _, rev = weights.partition(":")
            try:
                pair = (float(fwd), float(rev or fwd))
            except ValueError as exc:
                raise InvalidInputError(f"bad GRAPHSVC_ROLE_WEIGHTS entry {part!r}") from exc
            if not all(math.isfinite(w) and w >= 0.0 for w in pair):
                raise InvalidInputError(
                    f"bad GRAPHSVC_ROLE_WEIGHTS entry {part!r}: weights are finite and >= 0"
                )
            roles[role.strip()] = pair
        return MappingProxyType(roles)

    @property
    def entity_hops(self) -> bool:
        """Whether evaluations traverse the entity index at all (ENT-4)."""
        return self.entities != "off" and (
            self.entity_weight > 0
            or self.entity_query_weight > 0
            or (self.entity_anchors > 0 and self.entity_anchor_weight > 0)
        )


@dataclass(frozen=True)
class LifetimeSettings(Section):
    """How long what the service hands out stays valid (seconds)."""

    token_lifetime_s: int = 300
    cursor_lifetime_s: int = 300
    receipt_lifetime_s: int = 3600
    # Read manifests (observation records) are kept this long for observe/recordUse.
    manifest_lifetime_s: int = 86_400


@dataclass(frozen=True)
class EmbeddingSettings(Section):
    """The embedding model (graphsvc.embed.models: all-MiniLM-L6-v2,
    bge-small-en-v1.5 or all-mpnet-base-v2). A database keeps the model its embeddings came from;
    `graphsvc reembed --model` moves it to another (docs/search-quality.md). An
    unknown name is refused when the service is built (graphsvc.embed.lazy)."""

    model: str = field(default="all-MiniLM-L6-v2", metadata=named("embedding_model"))
    # What embeds a search query: "int8", the model's ONNX graph quantised (faster at
    # the same recall: docs/performance.md, "The query encoder"), or "fp32". Bodies
    # are always embedded in fp32.
    query_precision: Literal["int8", "fp32"] = "int8"
    # Query vectors a serving process keeps per model, by text (0: none): a repeated
    # query is not embedded again (graphsvc/embed/background.py).
    query_cache: Annotated[int, Range(ge=0)] = 1024


@dataclass(frozen=True)
class JobSettings(Section):
    """Background jobs (``GRAPHSVC_JOB_*``: the outbox of deferred atomisation and
    embeddings, store/jobs.py, atomise/worker.py, docs/operations.md): a worker holds
    a job ``lease_s`` and renews the hold while it runs; a job whose worker died is
    taken again after it runs out. `graphsvc serve` looks for such jobs every
    ``poll_s``; a job is given up (`failed`, `graphsvc jobs retry` puts it back) after
    ``max_attempts`` claims."""

    prefix: ClassVar[str] = "job_"

    lease_s: PositiveFloat = 60.0
    poll_s: PositiveFloat = 5.0
    max_attempts: Positive = 5


@dataclass(frozen=True)
class OperationsSettings(Section):
    """Erasure, replicas and bulk import (docs/operations.md, docs/ingest.md)."""

    # Disk erasure (docs/erasure.md): the bytes of a finished purge must be gone
    # from the managed Neo4j's files within this many seconds, i.e. `graphsvc
    # compact` runs at least this often; `graphsvc erasure status` reports a purge
    # older than this as overdue.
    erasure_max_delay_s: PositiveFloat = 86_400.0
    # Replicas (ops/replicas.py): how long a `graphsvc serve` registration holds
    # without renewal; after a crash, replicas with other keys wait this long.
    replica_lease_s: PositiveFloat = 30.0
    # Bulk import (``graphsvc import``, docs/ingest.md): rows per batch (one
    # transaction each).
    import_batch: int = 2_000


@dataclass(frozen=True)
class Settings:
    """Every tunable of graphsvc, by section. Each field of a section is read from
    ``GRAPHSVC_<NAME>`` (see :data:`NAMES`)."""

    neo4j: Neo4jSettings = field(default_factory=Neo4jSettings)
    paths: PathSettings = field(default_factory=PathSettings)
    http: HttpSettings = field(default_factory=HttpSettings)
    client: ClientSettings = field(default_factory=ClientSettings)
    atomise: AtomiseSettings = field(default_factory=AtomiseSettings)
    write: WriteSettings = field(default_factory=WriteSettings)
    graphql: GraphQLSettings = field(default_factory=GraphQLSettings)
    read: ReadSettings = field(default_factory=ReadSettings)
    ranking: RankingSettings = field(default_factory=RankingSettings)
    lifetimes: LifetimeSettings = field(default_factory=LifetimeSettings)
    embedding: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    jobs: JobSettings = field(default_factory=JobSettings)
    operations: OperationsSettings = field(default_factory=OperationsSettings)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Read ``GRAPHSVC_*`` variables, then apply ``overrides`` (by setting name).

        Raises:
            InvalidInputError: a variable does not parse as its field's type, or a
                value is not one of its choices or out of its range.
        """
        source = os.environ if env is None else env
        values = {n: source[_env(n)] for n in NAMES if _env(n) in source}
        if "java_home" not in values and source.get("JAVA_HOME"):
            values["java_home"] = source["JAVA_HOME"]
        return cls().with_(**{**values, **overrides})

    def with_(self, **changes: Any) -> Settings:
        """A copy with some settings changed, by their names (``GRAPHSVC_*``,
        lowercase); a string is parsed as the field's type.

        Raises:
            InvalidInputError: a value does not parse, is not one of its choices or
                is out of its range.
        """
        by_section: dict[str, dict[str, Any]] = {}
        for name, value in changes.items():
            if name not in NAMES:
                raise TypeError(f"no setting named {name!r}")
            section, name_in_section = NAMES[name]
            kind = _hints(type(getattr(self, section)))[name_in_section][0]
            if isinstance(value, str) and kind is not str and get_origin(kind) is not Literal:
                value = _parse(name, kind, value)
            by_section.setdefault(section, {})[name_in_section] = value
        return dataclasses.replace(
            self,
            **{s: dataclasses.replace(getattr(self, s), **v) for s, v in by_section.items()},
        )

    def export(self, *names: str) -> None:
        """Put these settings into this process's environment as ``GRAPHSVC_*``
        variables, for processes it spawns that read their settings from there
        (``serve --workers``)."""
        for name in names:
            section, name_in_section = NAMES[name]
            os.environ[_env(name)] = str(getattr(getattr(self, section), name_in_section))


def fill(cls: type[Projection], *sections: Section, **given: Any) -> Projection:
    """The dataclass ``cls`` (a use case's limits) with each field taken from the
    first of ``sections`` that has a field of its name; ``given`` supplies the others
    (computed or renamed). A field that is neither has to have a default, else
    construction fails."""
    taken: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if not f.init or f.name in given:
            continue
        for section in sections:
            if f.name in _hints(type(section)):
                taken[f.name] = getattr(section, f.name)
                break
    return cls(**taken, **given)


def _env(name: str) -> str:
    return "GRAPHSVC_" + name.upper()


_HINTS: dict[type, dict[str, tuple[Any, Range | None]]] = {}


def _hints(section: type) -> dict[str, tuple[Any, Range | None]]:
    """Each field of ``section`` → (its type, its range or None)."""
    if section not in _HINTS:
        hints = get_type_hints(section, include_extras=True)
        out: dict[str, tuple[Any, Range | None]] = {}
        for f in dataclasses.fields(section):
            hint = hints[f.name]
            if get_origin(hint) is Annotated:
                kind, *extras = get_args(hint)
                out[f.name] = (kind, next((e for e in extras if isinstance(e, Range)), None))
            else:
                out[f.name] = (hint, None)
        _HINTS[section] = out
    return _HINTS[section]


def _parse(name: str, kind: Any, raw: str) -> Any:
    """``raw`` (a variable's text) as a value of type ``kind``.

    Raises:
        InvalidInputError: it does not parse.
    """
    try:
        if kind is int:
            return int(raw)
        if kind is float:
            return float(raw)
        if kind is Path:
            return Path(raw).expanduser()
    except ValueError as exc:
        type_name = getattr(kind, "__name__", str(kind))
        raise InvalidInputError(f"{_env(name)}={raw!r} is not a valid {type_name}") from exc
    return raw


def _check_value(section: type[Section], name_in_section: str, value: Any) -> None:
    """Raise if ``value`` is not one of the field's choices or is out of its range.

    Raises:
        InvalidInputError: naming the ``GRAPHSVC_*`` variable and what it must be.
    """
    kind, bounds = _hints(section)[name_in_section]
    if get_origin(kind) is Literal:
        choices = [str(c) for c in get_args(kind)]
        if value not in choices:
            must = f"{', '.join(choices[:-1])} or {choices[-1]}"
            raise InvalidInputError(f"{_env(_name_of(section, name_in_section))} must be {must}")
    elif bounds is not None and not bounds.holds(value):  # NaN fails too
        raise InvalidInputError(
            f"{_env(_name_of(section, name_in_section))} must be "
            + bounds.describe(integral=kind is int)
        )


def _name_of(section: type[Section], name_in_section: str) -> str:
    """The setting's name of a section's field."""
    f = next(f for f in dataclasses.fields(section) if f.name == name_in_section)
    return str(f.metadata.get("name", section.prefix + name_in_section))


def _names() -> dict[str, tuple[str, str]]:
    """Each setting's name → (section, field)."""
    names: dict[str, tuple[str, str]] = {}
    for section, hint in get_type_hints(Settings).items():
        for f in dataclasses.fields(hint):
            name = _name_of(hint, f.name)
            assert name not in names, f"two settings named {name}"
            names[name] = (section, f.name)
    return names


# The one map from the flat ``GRAPHSVC_*`` names to the sections.
NAMES: Mapping[str, tuple[str, str]] = _names()

# The settings that switch on an experiment measured and not kept (field metadata
# EXPERIMENTAL), by name.
EXPERIMENTAL_NAMES: frozenset[str] = frozenset(
    name
    for name, (section, name_in_section) in NAMES.items()
    for f in dataclasses.fields(get_type_hints(Settings)[section])
    if f.name == name_in_section and f.metadata.get("experimental")
)

# Every weight by which the entity index takes part in ranking, at 0
# (``settings.with_(**ENTITY_WEIGHTS_OFF)``): ranking is exactly SPEC §5 on a database
# that keeps its entity index (ENT-4). A new entity weight belongs here.
ENTITY_WEIGHTS_OFF: Mapping[str, float] = {
    "entity_weight": 0.0,
    "entity_query_weight": 0.0,
    "entity_anchor_weight": 0.0,
}
