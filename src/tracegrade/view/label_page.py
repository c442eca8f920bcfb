"""The label queue: a run's unlabelled answers one at a time, labelled by keyboard.

    >>> "g good" in KEYS_LINE
    True

Each item is one answer on one metric, nearest the metric's threshold first
(``labelqueue``). The page shows what the judge read (question, reference,
evidence, answer), the judge's score and the threshold, and one form: good,
bad or skip, with an optional note. Keys: g good, b bad, s skip (leaves the
queue unlabelled), n or → next (the item stays for later), u shows the answer
just labelled again to change its label, Esc leaves the note. The evidence the
judge saw stands beside the question and answer, so a person reads both at once.
The forms work without the keys. With them, a key sends what its button would
(the label, or the next answer's address) from the page's script and shows the
answer that comes back in place of this one: the page is never unloaded, so a
key pressed while a label is on its way is kept, in order, and sent once the
answer it is meant for is shown (a key pressed while a page was replaced was
lost). The script is inline, as every view page's, which the view's
Content-Security-Policy (frame-ancestors only) allows.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Sequence

from tracegrade.core.results import CaseResult
from tracegrade.judge.prompt import tool_calls_text
from tracegrade.view.label_forms import LabelTarget, label_form, queue_url
from tracegrade.store.labelrows import AnswerLabel, masked
from tracegrade.view.labelqueue import FILL, GATE_LABELS, TURNS, Candidate, Fill, Key
from tracegrade.view.shell import case_url, e, layout, options, run_url, section, with_query

KEYS_LINE = "keys: g good · b bad · s skip (not judged, leaves your queue) · n or → next (stays for later) · " \
            "u change the last label · Esc leaves the note"

QUEUE_JS = """
(() => {
  const VERDICTS = {g: 'good', b: 'bad', s: 'skip'}, MOVES = ['n', 'ArrowRight', 'u'];
  const root = document.documentElement, pending = [];  // keys pressed, not yet sent, in order
  let busy = false, shown = 0;
  const mark = () => { root.dataset.shown = String(shown); root.dataset.waiting = String(pending.length + busy); };
  const show = async (response) => {  // the page a key led to, in place of this one's
    const next = new DOMParser().parseFromString(await response.text(), 'text/html');
    const main = next.querySelector('main');
    if (main) document.querySelector('main').replaceWith(document.adoptNode(main));
    else document.body.replaceWith(document.adoptNode(next.body));
    document.title = next.title;
    if (response.ok) history.replaceState(null, '', response.url);
    else pending.length = 0;  // refused (the page says why): the keys after it were meant for other answers
    shown += 1;
  };
  const send = async (key) => {  // a label stored (the form's fields, the key's verdict), or another answer
    const form = document.querySelector('#to-label form.label');
    const link = document.getElementById(key === 'u' ? 'undo' : 'next');
    if (VERDICTS[key] && form) {
      const fields = new URLSearchParams(new FormData(form));
      fields.set('verdict', VERDICTS[key]);
      await show(await fetch(form.action, {method: 'POST', body: fields}));
    } else if (MOVES.includes(key) && link) {
      await show(await fetch(link.href));
    }
  };
  const work = async () => {  // one key at a time: each answer shown is the one the next key labels
    if (busy) return;
    busy = true;
    try {
      while (pending.length) { const key = pending.shift(); mark(); await send(key); }
    } catch (error) {
      pending.length = 0;
      location.reload();  // the view could not be reached: the page as the server has it now
    } finally { busy = false; mark(); }
  };
  document.addEventListener('keydown', (event) => {
    const tag = (event.target.tagName || '').toLowerCase();
    if (event.key === 'Escape' && ['input', 'textarea'].includes(tag)) { event.target.blur(); return; }
    if (['input', 'select', 'textarea'].includes(tag) || event.ctrlKey || event.metaKey || event.altKey) return;
    if (!VERDICTS[event.key] && !MOVES.includes(event.key)) return;
    event.preventDefault();
    pending.push(event.key);
    mark();
    work();
  });
  mark();
})();
"""


ORDERS = ((FILL, "one metric until it can gate"), (TURNS, "the metrics in turn"))


@dataclass(frozen=True)
class Queue:
    """Where a person is in a run's queue."""

    run_id: str
    metrics: Sequence[str]  # the metrics the judge scored in the run
    metric: str  # the one chosen, "" for all
    annotator: str
    passed: int  # items passed over with "next" in this walk (still in the queue)
    left: int  # items this person has neither labelled nor skipped (those passed over among them)
    labelled: int  # this person's good and bad labels in the run
    last: AnswerLabel | None = None  # the label this person just gave (shown, with u to change it)
    skipped: int = 0  # this person's skips in the run
    mode: str = FILL  # over every metric: fill one until it can gate, or the metrics in turn
    fill: Fill | None = None  # the metric being filled, and this person's labels on it

    def url(self, passed: int | None = None, last: Key | None = None, again: Key | None = None) -> str:
        """This walk's address; ``last``: the item just labelled, ``again``: an item shown again to relabel."""
        chosen = self.passed if passed is None else passed
        return with_query(queue_url(self.run_id), {"metric": self.metric, "annotator": self.annotator, "pass": chosen,
                                                   "last": item_ref(last), "again": item_ref(again),
                                                   "mode": "" if self.mode == FILL else self.mode})


def item_ref(key: Key | None) -> str:
    """An item in an address: ``metric:repeat:case`` (a metric name is an identifier, so no ':')."""
    return f"{key[2]}:{key[1]}:{key[0]}" if key else ""


def parse_ref(ref: str) -> Key | None:
    """``item_ref``'s key back; None for anything else."""
    metric, _, rest = ref.partition(":")
    repeat, _, case_id = rest.partition(":")
    return (case_id, int(repeat), metric) if metric and repeat.isdigit() and case_id else None


def render(queue: Queue, item: Candidate | None, result: CaseResult | None, reference: str, expected: str,
           csrf: str, current: AnswerLabel | None = None) -> str:
    """The page at ``item`` (None: nothing left to label in this walk); ``current``: its label, shown again."""
    current = masked(current) if current else None
    body = f'<p id="keys" class="keys">{e(KEYS_LINE)}</p>' + _chooser(queue) + _filling(queue) + _last(queue)
    if item is None or result is None or result.reply is None:
        body += section("Nothing left", _done(queue), "done")
    else:
        body += _item(queue, item, result, reference, expected, csrf, current)
    return layout(f"Label answers · {queue.run_id}", body, crumbs=[("runs", "/"), (queue.run_id, run_url(queue.run_id)),
                                                                    ("label", queue.url(0))],
                  script=QUEUE_JS)


def _chooser(queue: Queue) -> str:
    choices = [("", "every metric")] + [(m, m) for m in queue.metrics]
    return (f'<form class="filters" method="get" action="{e(queue_url(queue.run_id))}">'
            f'<label>metric <select name="metric">{options(choices, queue.metric)}</select></label>'
            f'<label>order <select name="mode">{options(ORDERS, queue.mode)}</select></label>'
            f'<label>labelling as <input type="text" name="annotator" value="{e(queue.annotator)}" size="12"></label>'
            f'<button type="submit">show</button>'
            f'<span class="muted" id="progress">{queue.left} left · {queue.labelled} labelled by {e(queue.annotator)}'
            f'{f" · {queue.skipped} skipped" if queue.skipped else ""}'
            f'{f" · {queue.passed} passed over" if queue.passed else ""}</span></form>')


def _filling(queue: Queue) -> str:
    """What the fill mode is doing: the metric it fills, and how far it is from gating."""
    if queue.fill is None:
        return ""
    f = queue.fill
    return (f'<p id="filling">Filling <b>{e(f.metric)}</b> until it can gate: <b>{f.good}</b> good and '
            f'<b>{f.bad}</b> bad of the {GATE_LABELS} and {GATE_LABELS} calibration needs'
            f'{"" if f.gates else " (it does not gate: every other metric can)"}.</p>')


def _last(queue: Queue) -> str:
    """The label just given, with the way back to it (u)."""
    if queue.last is None:
        return ""
    g = queue.last
    again = queue.url(again=(g.case_id, g.repeat, g.metric))
    return (f'<p id="last">Labelled <b>{e(g.case_id)}</b>{f" #{g.repeat + 1}" if g.repeat else ""} on '
            f'<b>{e(g.metric)}</b>: <b id="last-verdict">{e(g.verdict)}</b> · '
            f'<a id="undo" href="{e(again)}">change it (u)</a></p>')


def _item(queue: Queue, item: Candidate, result: CaseResult, reference: str, expected: str, csrf: str,
          current: AnswerLabel | None) -> str:
    reply = result.reply
    assert reply is not None
    target = LabelTarget(queue.run_id, item.case_id, item.repeat, item.metric)
    head = (f'<p>Is this answer <b>good</b> or <b>bad</b> on <b id="metric">{e(item.metric)}</b>? '
            f'The judge scored it <b id="judge-value">{item.value:.2f}</b>; {_passes_at(item)}.</p>')
    again = f'<p id="again">Your label: <b>{e(current.verdict)}</b>. Press another key to change it.</p>' \
        if current else ""
    form = again + label_form(target, queue.annotator, csrf, queue.url(last=item.key), current, skip=True)
    # WHY back to the same place when shown again (u): the walk's next item was not passed over.
    onward = queue.url() if current else queue.url(queue.passed + 1)
    next_link = (f'<p><a id="next" href="{e(onward)}">next (n, →): leave it for later</a> · '
                 f'<a href="{e(case_url(queue.run_id, item.case_id, item.repeat))}">the whole case</a></p>')
    tools = tool_calls_text(reply)
    read = [section("Question", f"<pre>{e(result.question)}</pre>", "question"),
            section("Answer", f'<pre id="answer">{e(reply.answer)}</pre>', "answer"),
            section("Reference answer", f"<pre>{e(reference)}</pre>" if reference else '<p class="muted">none</p>',
                    "reference")]
    if expected:
        read.append(section("Expected behaviour", f"<pre>{e(expected)}</pre>", "expected"))
    evidence = section("Evidence the judge saw",
                       "<h3>Context</h3>" + (f"<pre>{e(reply.context)}</pre>" if reply.context else
                                             '<p class="muted">none</p>')
                       + "<h3>Tool calls</h3>" + (f"<pre>{e(tools)}</pre>" if tools else '<p class="muted">none</p>'),
                       "evidence")
    # WHY side by side: faithfulness and hallucination are read against the evidence; below the
    # answer it was a scroll away on every item.
    return (section(f"Answer to label: {item.case_id}" + (f" #{item.repeat + 1}" if item.repeat else ""),
                    head + form + next_link, "to-label")
            + f'<div class="side beside"><div>{"".join(read)}</div><div>{evidence}</div></div>')


def _passes_at(item: Candidate) -> str:
    if item.threshold is None:
        return f"its threshold is not a number (range {item.low:g}–{item.high:g})"
    return f"it passes at &ge; {item.threshold:g} (range {item.low:g}–{item.high:g})"


def _done(queue: Queue) -> str:
    on = f" on {queue.metric}" if queue.metric else ""
    again = (f' <a href="{e(queue.url(0))}">Start again at the items you passed over</a>.' if queue.passed else "")
    # WHY this person as the reference: labels from several people on one answer need someone named first.
    export = with_query("/labels.json", {"run": queue.run_id, "reference": queue.annotator})
    return (f'<p id="nothing-left">No unlabelled answer left for {e(queue.annotator)} in this run{e(on)}.{again}</p>'
            f'<p>Measure the judge on these labels: <code>tracegrade calibrate --from-store {e(queue.run_id)} '
            f'--reference {e(shlex.quote(queue.annotator))}</code>, or download them as a labels file: '
            f'<a href="{e(export)}">labels.json</a>.</p>')
