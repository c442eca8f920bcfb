"""What model calls cost: a price table per model id, and each case's cost.

    >>> table = PriceTable({"gpt-4o-mini*": Price(0.15, 0.60)})
    >>> round(table.cost("gpt-4o-mini-2024-07-18", 1_000_000, 100_000), 4)
    0.21
    >>> table.cost("qwen-local", 10, 10) is None
    True

Prices are USD per million tokens, read from a TOML file (the shipped
``prices.toml`` by default). An agent that reports its own cost in the trace
(``usage.costUsd``) is believed over the table.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Mapping

from tracegrade.core.errors import ConfigError
from tracegrade.core.results import CaseResult

DEFAULT_PRICES = Path(__file__).parent / "prices.toml"


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float


@dataclass(frozen=True)
class PriceTable:
    """Model id -> Price; a key ending in ``*`` is a prefix, the longest one wins."""

    prices: Mapping[str, Price]

    # WHY kept: every case of a run asks for the same model or two, and the prefix search walks
    # the whole table (~5 us a case where the model has no price, as in most local runs)
    _found: dict[str, Price | None] = field(default_factory=dict, init=False, repr=False, compare=False)

    def price(self, model_id: str) -> Price | None:
        if model_id in self.prices:
            return self.prices[model_id]
        if model_id in self._found:
            return self._found[model_id]
        prefixes = [k for k in self.prices if k.endswith("*") and model_id.startswith(k[:-1])]
        found = self.prices[max(prefixes, key=len)] if prefixes else None
        if len(self._found) < 64:  # WHY a bound: the agent names its model, and may name a new one each case
            self._found[model_id] = found
        return found

    def cost(self, model_id: str, input_tokens: int, output_tokens: int) -> float | None:
        """USD for one call's tokens, or None when the model has no price."""
        price = self.price(model_id)
        if price is None:
            return None
        return (input_tokens * price.input_per_mtok + output_tokens * price.output_per_mtok) / 1e6


def load_prices(path: str | Path | None = None) -> PriceTable:
    path = Path(path or DEFAULT_PRICES)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"price table {path}: file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"price table {path}: {exc}") from None
    except RecursionError:  # tomllib recurses; no price table nests that deep
        raise ConfigError(f"price table {path}: nested too deeply") from None
    prices = {}
    for model_id, entry in data.get("models", {}).items():
        if not isinstance(entry, dict) or set(entry) != {"input", "output"}:
            raise ConfigError(f"price table {path}: model {model_id!r} needs exactly 'input' and 'output'")
        prices[model_id] = Price(float(entry["input"]), float(entry["output"]))
    return PriceTable(prices)


def agent_model_of(result: CaseResult, fallback: str) -> str:
    """The model the agent says it used, else the run's agent model."""
    return (result.reply.model if result.reply is not None and result.reply.model else "") or fallback


def price_case(result: CaseResult, table: PriceTable, agent_model: str, judge_model: str | None,
               user_model: str | None = None) -> CaseResult:
    """The result with its agent, judge and simulated user's cost filled in (0 for an unpriced model)."""
    reported = result.reply.usage.cost_usd if result.reply is not None else 0.0
    agent = reported or table.cost(agent_model_of(result, agent_model), *result.agent_tokens) or 0.0
    judge = (table.cost(judge_model, *result.judge_tokens) or 0.0) if judge_model else 0.0
    user = (table.cost(user_model, *result.user_tokens) or 0.0) if user_model and any(result.user_tokens) else 0.0
    if (agent, judge, user) == (result.agent_cost_usd, result.judge_cost_usd, result.user_cost_usd):
        return result  # WHY: a copy of a CaseResult costs more than the pricing; an unpriced case is common
    return replace(result, agent_cost_usd=agent, judge_cost_usd=judge, user_cost_usd=user)


def unpriced_models(
    results: Iterable[CaseResult], table: PriceTable, agent_model: str, judge_model: str | None
) -> list[str]:
    """Models that made calls the table cannot price (their cost was counted as 0)."""
    billed, judge_billed = set(), False
    for r in results:
        billed.add(billed_agent_model(r))
        judge_billed = judge_billed or any(r.judge_tokens)
    return unpriced(table, billed, judge_billed, agent_model, judge_model)


def billed_agent_model(result: CaseResult) -> str | None:
    """The model the agent's tokens are priced by when it reported no cost itself:
    its reply's model, "" for the run's agent model; None when nothing needs a price."""
    reported = result.reply is not None and result.reply.usage.cost_usd > 0
    if reported or not any(result.agent_tokens):
        return None
    return agent_model_of(result, "")


def unpriced(table: PriceTable, billed: Iterable[str | None], judge_billed: bool, agent_model: str,
             judge_model: str | None, user_model: str | None = None) -> list[str]:
    """The models of ``billed`` (see billed_agent_model), the judge's when it used tokens and
    the simulated user's (``user_model``: given when it used tokens) that the table has no price for."""
    missing = {model or agent_model for model in billed if model is not None}
    missing = {model for model in missing if table.price(model) is None}
    for model, used in ((judge_model, judge_billed), (user_model, True)):
        if model and used and table.price(model) is None:
            missing.add(model)
    return sorted(missing)
