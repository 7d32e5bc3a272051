"""The atom token budget (ATM-5), counted with tiktoken ``cl100k_base``.

Fail-soft, following the seed's implementation: an atom up to 25% over
``max_atom_tokens`` is kept with a warning; an atom further over is dropped and
counted; more than 10 atoms are cut to the first 10; fewer than 2 surviving atoms
means the source was too small to atomise (informational, not an error).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from graphsvc.errors import InvalidInputError
from graphsvc.tokenizer import count_tokens

__all__ = [
    "DEFAULT_ATOM_TOKENS",
    "MAX_ATOMS",
    "MAX_ATOM_TOKENS",
    "MIN_ATOMS",
    "MIN_ATOM_TOKENS",
    "SOURCE_TOO_SMALL",
    "BudgetOutcome",
    "apply_budget",
    "count_tokens",
    "source_within_budget",
    "tolerated_tokens",
    "validate_max_atom_tokens",
]

DEFAULT_ATOM_TOKENS: Final = 200
MIN_ATOM_TOKENS: Final = 50
MAX_ATOM_TOKENS: Final = 1000
MIN_ATOMS: Final = 2
MAX_ATOMS: Final = 10
SOURCE_TOO_SMALL: Final = "source_too_small"


@dataclass(frozen=True, slots=True)
class BudgetOutcome:
    """The atoms that survive the budget, and why the others did not.

    Attributes:
        kept: surviving atoms in their original order (at most 10).
        warnings: one message per kept atom that is over budget by at most 25%.
        dropped_count: atoms dropped for being more than 25% over budget, or empty.
        truncated_count: surviving atoms cut because there were more than 10.
        reason: ``"source_too_small"`` when fewer than 2 atoms survive, else None.
    """

    kept: list[str]
    warnings: list[str] = field(default_factory=list)
    dropped_count: int = 0
    truncated_count: int = 0
    reason: Literal["source_too_small"] | None = None


def validate_max_atom_tokens(max_atom_tokens: int) -> int:
    """Check ``max_atom_tokens`` is an integer in [50, 1000].

    Args:
        max_atom_tokens: the per-atom budget.

    Returns:
        The same value.

    Raises:
        InvalidInputError: it is not an int in [50, 1000].
    """
    if (
        isinstance(max_atom_tokens, bool)
        or not isinstance(max_atom_tokens, int)
        or not MIN_ATOM_TOKENS <= max_atom_tokens <= MAX_ATOM_TOKENS
    ):
        raise InvalidInputError(
            f"maxAtomTokens must be an integer in [{MIN_ATOM_TOKENS}, {MAX_ATOM_TOKENS}]",
            details={"maxAtomTokens": repr(max_atom_tokens)},
        )
    return max_atom_tokens


def tolerated_tokens(max_atom_tokens: int) -> int:
    """Return the largest token count still kept (budget + 25%, rounded down).

    Args:
        max_atom_tokens: the per-atom budget.

    Returns:
        ``floor(max_atom_tokens * 1.25)``, computed in integers.

    Raises:
        InvalidInputError: the budget is outside [50, 1000].
    """
    return validate_max_atom_tokens(max_atom_tokens) * 5 // 4


def apply_budget(atoms: Sequence[str], max_atom_tokens: int) -> BudgetOutcome:
    """Apply the ATM-5 budget to a curator's atoms.

    Empty (whitespace-only) atoms are dropped and counted like over-budget ones.
    Over-budget atoms are dropped *before* the cut to 10, so a bad atom does not
    push a good one out.

    Args:
        atoms: the curator's atoms, in order.
        max_atom_tokens: the per-atom budget, in [50, 1000].

    Returns:
        The outcome (see :class:`BudgetOutcome`).

    Raises:
        InvalidInputError: the budget is outside [50, 1000].
    """
    limit = tolerated_tokens(max_atom_tokens)
    survivors: list[tuple[int, str, int]] = []
    dropped = 0
    for index, atom in enumerate(atoms):
        text = atom.strip()
        tokens = count_tokens(text) if text else 0
        if not text or tokens > limit:
            dropped += 1
            continue
        survivors.append((index, text, tokens))
    truncated = max(0, len(survivors) - MAX_ATOMS)
    survivors = survivors[:MAX_ATOMS]
    kept = [text for _, text, _ in survivors]
    warnings = [
        f"atom {index} has {tokens} tokens, over the budget of {max_atom_tokens} "
        "by at most 25%; kept"
        for index, _, tokens in survivors
        if tokens > max_atom_tokens
    ]
    return BudgetOutcome(
        kept=kept,
        warnings=warnings,
        dropped_count=dropped,
        truncated_count=truncated,
        reason=SOURCE_TOO_SMALL if len(kept) < MIN_ATOMS else None,
    )


def source_within_budget(text: str, max_atom_tokens: int) -> bool:
    """Tell whether a source already fits one atom (then it is ``source_too_small``).

    Args:
        text: the source body.
        max_atom_tokens: the per-atom budget, in [50, 1000].

    Returns:
        True if ``text`` has at most ``max_atom_tokens`` tokens.

    Raises:
        InvalidInputError: the budget is outside [50, 1000].
    """
    return count_tokens(text) <= validate_max_atom_tokens(max_atom_tokens)
