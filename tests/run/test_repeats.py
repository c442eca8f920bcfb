"""--repeat N: every case N times, per-case mean and variance, run-level mean ± sd."""

from __future__ import annotations

import asyncio
import json
from itertools import count

import pytest

from runs_support import GOLDEN_PATH, good_reply, result, scores
from tracegrade.case.dataset import load_dataset
from tracegrade.judge.scoring import Judge
from judge_rubrics import SCALE_RUBRIC, SEED_METRICS as METRICS
from tracegrade.models.scripted import ScriptedModel
from tracegrade.stats.repeats import case_spreads, run_level
from tracegrade.run.runner import RunSettings, run_cases

CASES = load_dataset(GOLDEN_PATH).select(["rag-return-01", "tool-status-01"]).cases


async def right(case):
    return good_reply(case)


def test_each_case_runs_n_times_and_the_judge_is_asked_every_time():
    correctness = count()
    # The judge gives correctness 5, 4, 3, 5, 4, 3 ... in call order.
    judge_model = ScriptedModel(lambda messages, options: json.dumps(
        {**scores(5), "correctness": 5 - next(correctness) % 3, "reason": "ok"}))
    judge = Judge(judge_model, SCALE_RUBRIC)
    results = asyncio.run(run_cases(CASES, right, judge, RunSettings(repeat=3, concurrency=1)))
    assert [(r.case_id, r.repeat) for r in results] == [
        (c.id, rep) for rep in range(3) for c in CASES]  # repetition-major, dataset order
    assert len(judge_model.calls) == 6  # no cached answer reused on a repeat
    spreads = {s.case_id: s for s in case_spreads(results)}
    assert spreads["rag-return-01"].runs == 3
    assert sorted(r.scores["correctness"] for r in results) == [3, 3, 4, 4, 5, 5]
    for spread in spreads.values():
        values = [r.scores["correctness"] for r in results if r.case_id == spread.case_id]
        mean = sum(values) / 3
        assert spread.means["correctness"] == pytest.approx(mean)
        assert spread.variances["correctness"] == pytest.approx(sum((v - mean) ** 2 for v in values) / 2)
        assert spread.variances["relevance"] == 0.0


def test_run_level_is_mean_and_sd_across_repetitions():
    results = [
        result("a", "pass", score=scores(5), repeat=0), result("b", "pass", score=scores(5), repeat=0),
        result("a", "pass", score=scores(4), repeat=1), result("b", "fail", score=scores(2), repeat=1),
    ]
    level = run_level(results)
    assert level["taskSuccess"] == pytest.approx((0.75, 0.5 / 2 ** 0.5))  # 1.0 and 0.5
    assert level["relevance"] == pytest.approx((4.0, 2 ** 0.5))      # 5.0 and 3.0
    assert set(METRICS) <= set(level)


def test_one_repetition_has_no_spread():
    level = run_level([result("a", "pass", score=scores(5))])
    assert level["relevance"] == (5.0, 0.0)
