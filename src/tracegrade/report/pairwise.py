"""The console report of a pairwise comparison: the tally, position bias, sign test, each pair."""

from __future__ import annotations

from tracegrade.judge.pairwise import PairVerdict, PairwiseReport

RULE = "=" * 72
SAYS = {"a": "A wins", "b": "B wins", "tie": "tie"}


def render(report: PairwiseReport) -> str:
    judged, flips = report.judged, sum(v.followed_position for v in report.judged)
    identical = sum(v.identical for v in report.verdicts)
    unjudged = len(report.verdicts) - len(judged) - identical
    flip = "n/a (no pair judged in both orders)" if report.flip_rate is None else (
        f"{report.flip_rate:.0%} ({flips} of {len(judged)} pairs picked the same position in both orders)")
    lines = [
        "PAIRWISE COMPARISON",
        f"  run A    {report.run_a}",
        f"  run B    {report.run_b}",
        f"  judge    {report.judge_model}   rubric {report.rubric_hash}   (answers anonymised, judged in both orders)",
        f"  pairs    {len(report.verdicts)}: judged {len(judged)}, identical answers {identical}, "
        f"no usable verdict {unjudged}; skipped {len(report.skipped)}",
        RULE,
        f"  A wins {report.wins}   ties {report.ties}   B wins {report.losses}"
        "   (a win counts only when both orders agree)",
        f"  position flip rate  {flip}",
        f"  sign test           p = {report.p_value:.4f} ({report.wins} vs {report.losses}, ties left out)",
        RULE,
        *(_pair(v) for v in report.verdicts),
    ]
    lines += [f"  {case_id:<24} skipped: {why}" for case_id, why in report.skipped]
    return "\n".join(lines)


def _pair(v: PairVerdict) -> str:
    if v.identical:
        return f"  {v.case_id:<24} tie      identical answers"
    if not v.judged:
        return f"  {v.case_id:<24} tie      no usable verdict: {v.error}"
    assert v.forward is not None and v.backward is not None  # a judged pair has both orders
    orders = f"A-first {v.forward.winner:<3} B-first {v.backward.winner:<3}"
    reason = v.forward.reason if v.outcome != "b" else v.backward.reason
    return f"  {v.case_id:<24} {SAYS[v.outcome]:<8} {orders}  {reason}"
