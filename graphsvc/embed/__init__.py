"""Embeddings: the Embedder protocol and the offline sentence-transformers model."""

from graphsvc.embed.sentence import Embedder, SentenceEmbedder, get_embedder

__all__ = ["Embedder", "SentenceEmbedder", "get_embedder"]
