"""Atomisation host layer (§11): curators and the ATM-5 token budget."""

from graphsvc.atomise.curators import Curator, LlmCurator, RuleCurator, parse_atoms
from graphsvc.atomise.token_budget import BudgetOutcome, apply_budget, count_tokens

__all__ = [
    "BudgetOutcome",
    "Curator",
    "LlmCurator",
    "RuleCurator",
    "apply_budget",
    "count_tokens",
    "parse_atoms",
]
