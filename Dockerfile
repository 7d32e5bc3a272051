# graphsvc's service image: the embedding model, the tokenizer and the ONNX query
# encoder baked in, so a container starts without network and answers /readyz once
# Neo4j is reachable. Used by docker-compose.yml beside the neo4j:5.26 image.
#
#   docker build -t graphsvc .
#   docker run -e GRAPHSVC_NEO4J_URI=bolt://… -e GRAPHSVC_NEO4J_PASSWORD=… -p 8000:8000 graphsvc
#
# Dependencies are installed at the versions the suite was last run on
# (requirements.lock). PyPI's torch wheel brings CUDA libraries (~3 GB); a CPU-only
# torch from your own index would make the image much smaller.
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    GRAPHSVC_STATE_DIR=/var/lib/graphsvc \
    XDG_CACHE_HOME=/opt/graphsvc/cache \
    GRAPHSVC_HOST=0.0.0.0 \
    GRAPHSVC_PORT=8000

WORKDIR /opt/graphsvc/src
# The lock first: the dependency layer is rebuilt only when a pin changes.
COPY requirements.lock ./
RUN pip install -r requirements.lock

COPY pyproject.toml README.md ./
COPY graphsvc ./graphsvc
COPY cypher ./cypher
COPY seed ./seed
# The model is loaded once here and the ONNX query encoder exported into the cache,
# so the first request does not pay for either.
RUN pip install --no-deps . \
    && useradd --system --home-dir /var/lib/graphsvc --create-home graphsvc \
    && mkdir -p /opt/graphsvc/cache \
    && python -c "from graphsvc.embed import get_embedder; get_embedder().embed(['warm up'])" \
    && python -c "from graphsvc.tokenizer import get_tokenizer; get_tokenizer().count('warm up')" \
    && chown -R graphsvc /opt/graphsvc/cache

USER graphsvc
WORKDIR /var/lib/graphsvc
EXPOSE 8000
# Ready: Neo4j reachable, schema current, model loaded (docs/operations.md).
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
    CMD python -c "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=4).status == 200 else 1)"
CMD ["graphsvc", "serve"]
