"""Entity extraction (SPEC §16): the extractor protocol and the configured extractor.

An extractor is an adapter like the embedder: it turns head texts into
:class:`~graphsvc.core.entity_keys.Mention` lists, deterministically, and names its
``version``, which the database records (ENT-1, :mod:`graphsvc.ops.entity_index`).
graphsvc ships one: the rules of :mod:`graphsvc.core.entity_rules`, chosen over
spaCy's small English pipeline by ``bench/entities.py`` (docs/entities.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from graphsvc.core.entity_keys import Mention
from graphsvc.core.entity_resolution import RESOLUTION_VERSION
from graphsvc.core.entity_rules import RULES_VERSION, extract_rules
from graphsvc.errors import InvalidInputError

__all__ = ["EXTRACTORS", "EntityExtractor", "RuleExtractor", "extractor_for"]


class EntityExtractor(Protocol):
    """Texts → their entities; ``version`` changes whenever the output may change."""

    version: str

    def extract(self, texts: Sequence[str]) -> list[list[Mention]]: ...


class RuleExtractor:
    """The rule extractor (:mod:`graphsvc.core.entity_rules`): cheap enough for every write.
    Its version names the resolution rules too (ENT-6, :mod:`graphsvc.core.entity_resolution`):
    they decide which entity a mention belongs to."""

    version = f"{RULES_VERSION}+{RESOLUTION_VERSION}"

    def extract(self, texts: Sequence[str]) -> list[list[Mention]]:
        return [extract_rules(t, tentative=True) for t in texts]


EXTRACTORS = ("rules", "off")


def extractor_for(name: str) -> EntityExtractor | None:
    """The extractor named by ``GRAPHSVC_ENTITIES`` (None: the index is off).

    Raises:
        InvalidInputError: an unknown name.
    """
    if name == "rules":
        return RuleExtractor()
    if name == "off":
        return None
    raise InvalidInputError(f"GRAPHSVC_ENTITIES must be one of {', '.join(EXTRACTORS)}")
