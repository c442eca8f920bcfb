"""Where a metric's separation comes from: each part alone, and answers matched on word overlap.

    >>> part_aucs([({"model": 0.9, "code": 1.0}, "good"), ({"model": 0.9, "code": 0.0}, "bad")])
    {'model': 0.5, 'code': 1.0}
    >>> matched_pairs([("g1", 0.50, "good"), ("g2", 0.90, "good"), ("b1", 0.52, "bad"), ("b2", 0.10, "bad")])
    [('g1', 'b1')]

A metric scored by the model and by code (faithfulness: P(yes), code grounding,
word overlap; correctness: P(yes) and the metrics it requires) can separate good
from bad answers while the model adds nothing: with a judge that says yes to
everything, the code parts still fail the answers with an invented number.
Calibration therefore measures each part alone, and bars a model-scored metric
from gating when its model part alone stays under ``MODEL_ADDS`` (docs/calibration.md).

Word overlap (the share of the answer's content words in the evidence) already
separates most invented answers from faithful ones; the answers a judge must
*read* are the ones it cannot tell apart. ``matched_pairs`` pairs each bad answer
with the good answer nearest in overlap (within ``CALIPER``), each used once; the
AUC over those pairs is the figure for "reads meaning beyond shared words".
"""

from __future__ import annotations

from typing import Mapping, Sequence

from tracegrade.judge.agreement import auc

CALIPER = 0.05  # overlap difference two matched answers may have
MODEL = "model"
READS_MEANING = 0.65  # AUC on overlap-matched answers below which a metric is said not to read meaning
# The model part's AUC alone below which a model-scored metric's separation is said to come
# from code: 0.5 is a model that says the same to everything. WHY not min_auc: a model part
# at 0.69 that code lifts to 0.72 does separate; one at 0.52 does not.
MODEL_ADDS = 0.6


def part_aucs(rows: Sequence[tuple[Mapping[str, float], str]]) -> dict[str, float]:
    """Each part's AUC alone over the (parts, verdict) rows that have it."""
    names = list(dict.fromkeys(name for parts, _ in rows for name in parts))
    out = {}
    for name in names:
        good = [p[name] for p, v in rows if v == "good" and name in p]
        bad = [p[name] for p, v in rows if v == "bad" and name in p]
        if good and bad:
            out[name] = auc(good, bad)
    return out


def matched_pairs(rows: Sequence[tuple[str, float, str]], caliper: float = CALIPER) -> list[tuple[str, str]]:
    """(good id, bad id) pairs matched on overlap, nearest first, each answer used once."""
    goods = sorted((o, i) for i, o, v in rows if v == "good")
    used: set[str] = set()
    pairs = []
    for bad_id, overlap, _ in sorted((r for r in rows if r[2] == "bad"), key=lambda r: (r[1], r[0])):
        best = min((g for g in goods if g[1] not in used and abs(g[0] - overlap) <= caliper),
                   key=lambda g: (abs(g[0] - overlap), g[1]), default=None)
        if best is not None:
            used.add(best[1])
            pairs.append((best[1], bad_id))
    return pairs
