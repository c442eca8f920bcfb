"""The regression gate: thresholds from a small TOML file, applied to a Comparison.

    >>> GateConfig().metrics.block_relative_drop
    0.1

Every rule yields a Finding (warn or block, with its reason); the verdict is
the worst of them: ``pass`` exits 0, ``block`` 1, ``warn`` 2. A latency or
cost rise blocks only on enough cases and when a one-sided Wilcoxon test on
the per-case values confirms it; otherwise it warns. The shipped
``defaults/gate.toml`` spells out the defaults below.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tracegrade.compare.comparison import Comparison, MetricRow, RiseTest
from tracegrade.core.errors import ConfigError
from tracegrade.core.validation import describe
from tracegrade.stats.safety import REFUSALS, SAFETY_CODES, violations
from tracegrade import defaults

Level = Literal["pass", "warn", "block"]
EXIT_CODES = {"pass": 0, "block": 1, "warn": 2}
# WHY a tolerance: 1 - 49/50 is 0.020000000000000018, and 2 pp must not count as "more than 2 pp".
EPSILON = 1e-9
DEFAULT_GATE = defaults.path("gate.toml")


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class MetricRules(_Section):
    warn_relative_drop: float = Field(default=0.05, ge=0)
    block_relative_drop: float = Field(default=0.10, ge=0)
    warn_when_all_dip: bool = True


class TaskSuccessRules(_Section):
    block_drop_pp: float = Field(default=2.0, ge=0)


class LatencyRules(_Section):
    block_p95_rise: float = Field(default=0.20, ge=0)
    min_rise_seconds: float = Field(default=0.05, ge=0)  # below this a rise is timer noise
    # Fewer cases than this, or a rise the per-case test does not confirm: warn, never block.
    min_cases: int = Field(default=20, ge=1)


class CostRules(_Section):
    block_avg_rise: float = Field(default=0.15, ge=0)
    min_cases: int = Field(default=20, ge=1)


class SafetyRules(_Section):
    block: bool = True
    codes: tuple[str, ...] = SAFETY_CODES
    denied_refusals: tuple[str, ...] = REFUSALS


class GroupRules(_Section):
    block_high_risk_regression: bool = True
    high_risk: tuple[str, ...] = ("risk=high",)


class StatisticsRules(_Section):
    alpha: float = Field(default=0.05, gt=0, lt=1)
    require_significance: bool = False  # true: metric drops gate only when significant
    bootstrap_resamples: int = Field(default=10_000, ge=100)
    seed: int = 0


class GateConfig(_Section):
    metrics: MetricRules = MetricRules()
    task_success: TaskSuccessRules = TaskSuccessRules()
    latency: LatencyRules = LatencyRules()
    cost: CostRules = CostRules()
    safety: SafetyRules = SafetyRules()
    groups: GroupRules = GroupRules()
    statistics: StatisticsRules = StatisticsRules()


def load_gate(path: str | Path | None = None) -> GateConfig:
    """The gate file at ``path``, else the shipped ``gate.toml``."""
    if path is None and not DEFAULT_GATE.is_file():
        return GateConfig()
    path = Path(path or DEFAULT_GATE)
    try:
        return GateConfig.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise ConfigError(f"gate file {path}: not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"gate file {path}: {exc}") from None
    except RecursionError:  # the parser and the validation recurse; no gate nests that deep
        raise ConfigError(f"gate file {path}: nested too deeply") from None
    except ValidationError as exc:  # every mistake at once: fixing them one run at a time is slow
        raise ConfigError(f"gate file {path}: {describe(exc, GateConfig, limit=20)}") from None


@dataclass(frozen=True)
class Finding:
    level: Level
    rule: str
    message: str


@dataclass(frozen=True)
class Verdict:
    level: Level
    findings: tuple[Finding, ...]

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.level]


def decide(comparison: Comparison, config: GateConfig = GateConfig()) -> Verdict:
    findings = [
        *metric_drops(comparison, config),
        *all_dip(comparison, config),
        *task_success_drop(comparison, config),
        *safety(comparison, config),
        *latency_rise(comparison, config),
        *cost_rise(comparison, config),
        *high_risk_regressions(comparison, config),
    ]
    level: Level = "block" if any(f.level == "block" for f in findings) else "warn" if findings else "pass"
    return Verdict(level, tuple(findings))


def _gated(row: MetricRow, config: GateConfig) -> bool:
    """Whether a drop in this metric may gate: always, or only when significant."""
    return not config.statistics.require_significance or (row.tests is not None and row.tests.significant)


def metric_drops(comparison: Comparison, config: GateConfig) -> list[Finding]:
    rules, found = config.metrics, []
    for row in comparison.metrics:
        drop = -row.relative if row.relative is not None else 0.0
        if drop <= rules.warn_relative_drop + EPSILON or not _gated(row, config):
            continue
        level: Level = "block" if drop > rules.block_relative_drop + EPSILON else "warn"
        limit = rules.block_relative_drop if level == "block" else rules.warn_relative_drop
        found.append(Finding(level, "metric_drop", f"{row.name} fell {drop:.1%} ({row.baseline:.3f} -> "
                                                   f"{row.candidate:.3f}), more than {limit:.0%}{_significance(row)}"))
    return found


def all_dip(comparison: Comparison, config: GateConfig) -> list[Finding]:
    deltas = [row.delta for row in comparison.metrics if row.delta is not None]
    if config.metrics.warn_when_all_dip and len(deltas) >= 2 and all(d < 0 for d in deltas):
        return [Finding("warn", "all_metrics_dip", f"all {len(deltas)} metrics fell together: a pattern, not noise")]
    return []


def task_success_drop(comparison: Comparison, config: GateConfig) -> list[Finding]:
    row = comparison.metric("taskSuccess")
    if row is None or row.delta is None or not _gated(row, config):
        return []
    drop_pp = -row.delta * 100
    if drop_pp > config.task_success.block_drop_pp + EPSILON:
        return [Finding("block", "task_success_drop", f"task success fell {drop_pp:.1f} pp ({row.baseline:.1%} -> "
                        f"{row.candidate:.1%}), more than {config.task_success.block_drop_pp:g} pp{_significance(row)}")]
    return []


def safety(comparison: Comparison, config: GateConfig) -> list[Finding]:
    if not config.safety.block:
        return []
    return [Finding("block", "safety", f"{v.case_id}: {v.kind}: {v.detail}")
            for r in comparison.candidate_results
            for v in violations(r, config.safety.codes, config.safety.denied_refusals)]


def latency_rise(comparison: Comparison, config: GateConfig) -> list[Finding]:
    before, after = comparison.latency["p95"]
    rules = config.latency
    if after - before <= rules.min_rise_seconds or _rise(before, after) <= rules.block_p95_rise + EPSILON:
        return []
    what = (f"p95 latency rose {_percent(before, after)} ({before:.2f} s -> {after:.2f} s), "
            f"more than {rules.block_p95_rise:.0%}")
    return [_rise_finding("latency_p95", what, "latency", comparison.latency_rise, rules.min_cases, config)]


def cost_rise(comparison: Comparison, config: GateConfig) -> list[Finding]:
    before, after = comparison.cost_per_case
    if _rise(before, after) <= config.cost.block_avg_rise + EPSILON:
        return []
    what = (f"average cost per case rose {_percent(before, after)} (${before:.4f} -> ${after:.4f}), "
            f"more than {config.cost.block_avg_rise:.0%}")
    return [_rise_finding("cost_avg", what, "cost", comparison.cost_rise, config.cost.min_cases, config)]


def _rise_finding(rule: str, what: str, quantity: str, rise: RiseTest, min_cases: int, config: GateConfig) -> Finding:
    """A rise past its threshold blocks only on enough cases and when the per-case
    values rose significantly; otherwise it warns and says why.

    WHY: p95 of 12 cases is the slowest case, so one slow case moved it 27%
    between two runs with identical verdicts; and latency is noisy from run to run.
    """
    if rise.pairs < min_cases:
        return Finding("warn", rule, f"{what}; but not enough cases to judge {quantity} ({rise.pairs} compared, "
                                     f"the gate needs {min_cases})")
    p, alpha = rise.test.p_value, config.statistics.alpha
    verdict: Level = "block" if p < alpha else "warn"
    word = "rose significantly" if p < alpha else "did not rise significantly"
    return Finding(verdict, rule, f"{what}; per-case {quantity} {word} (one-sided Wilcoxon p={p:.3g}, "
                                  f"n={rise.pairs}, alpha {alpha:g})")


def high_risk_regressions(comparison: Comparison, config: GateConfig) -> list[Finding]:
    if not config.groups.block_high_risk_regression:
        return []
    return [Finding("block", "high_risk_regression", f"{group.key}: {', '.join(group.newly_failing)} passed in the "
                    f"baseline and fail in the candidate")
            for group in comparison.groups if group.key in config.groups.high_risk and group.newly_failing]


def _rise(before: float, after: float) -> float:
    if after <= before:
        return 0.0
    return math.inf if before == 0 else (after - before) / before


def _percent(before: float, after: float) -> str:
    rise = _rise(before, after)
    return "from zero" if math.isinf(rise) else f"{rise:.0%}"


def _significance(row: MetricRow) -> str:
    if row.tests is None:
        return ""
    test = row.tests.wilcoxon or row.tests.mcnemar
    word = "significant" if row.tests.significant else "not significant"
    return f"; {word} (p={test.p_value:.3g}, n={row.tests.pairs})" if test else ""
