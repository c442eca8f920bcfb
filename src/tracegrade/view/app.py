"""`tracegrade view`: one local web app over the run store and the span store.

    >>> from tracegrade.store.runstore import open_store
    >>> app = create_view_app(open_store("sqlite:///:memory:"))
    >>> sorted(r.path for r in app.routes if r.path.startswith("/runs"))[:2]
    ['/runs/{run_id}', '/runs/{run_id}/cases/{case_id:path}']

Routes are plain ``def``: FastAPI runs them in its thread pool, so a slow store
read never holds the event loop. Each route reads the store, hands plain data
to its page module (one module per page), and returns the HTML. The
production pages are the monitor's own app, mounted at /production/.

Safety as the monitor's: only the allowed Host names are answered (DNS
rebinding) and a browser request from another origin is refused (HostGuard,
outermost); with a token (what binding beyond loopback needs) every route
asks for it; pages may not be framed by another site; a POST (a label, the one
change the view makes) needs the page's CSRF token (csrf.py).
"""

from __future__ import annotations

import functools
import secrets
from pathlib import Path
from typing import Iterable, Iterator
from urllib.parse import urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tracegrade.compare.comparison import Comparison, compare_runs
from tracegrade.compare.gate import GateConfig, Verdict, decide
from tracegrade.core import jsontext
from tracegrade.core.errors import TracegradeError
from tracegrade.core.redact import redact, redact_data
from tracegrade.core.results import CaseResult
from tracegrade.case.schema import GoldenCase
from tracegrade.serve.hardening import LOOPBACK_NAMES, HostGuard
from tracegrade.serve.token_gate import TokenGate
from tracegrade.outputs import junit, markdown
from tracegrade.store import runref
from tracegrade.store.runstore import STRUCTURE_KEYS, RunInfo, RunStore
from tracegrade.view import calibration_page, case_page, compare_page, history_page, metrics_page, run_page, runs_page
from tracegrade.store.labelrows import NAME_CHARS
from tracegrade.view.caseindex import CaseIndex, Filters, build_index, paged
from tracegrade.view.csrf import CsrfGuard
from tracegrade.view.label_forms import case_labels
from tracegrade.view.label_routes import add_label_routes, default_annotator
from tracegrade.view.memo import Memo
from tracegrade.view.shell import case_url, e, framing_nav, layout, run_url

ENV_VAR = "TRACEGRADE_VIEW_TOKEN"  # its token, when it serves beyond loopback
RUNS_SHOWN = 500  # runs the landing page reads (the store's newest first)
OTHER_RUNS = 20  # recent runs on the dataset searched for the same case
SEARCH_CHARS = 200  # of the case search text


def create_view_app(store: RunStore, spans_db: Path | None = None, token: str | None = None,
                    allowed_hosts: Iterable[str] = LOOPBACK_NAMES, gate: GateConfig | None = None,
                    annotator: str | None = None) -> FastAPI:
    """The view over ``store`` (and the production traces in ``spans_db``).

    ``token``: every route needs it (None: none does; serve only on loopback then);
    ``annotator``: the name labels are given under unless the page names another
    (default: the login name)."""
    app = FastAPI(title="tracegrade view", docs_url=None, redoc_url=None, openapi_url=None)
    reader = Reader(store, gate or GateConfig())

    @app.exception_handler(TracegradeError)
    async def not_found(request: Request, exc: TracegradeError) -> HTMLResponse:
        return _missing(str(exc))

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        return Response(status_code=204)  # WHY: a browser asks on every page; a 404 is a console error

    labeller = annotator or default_annotator()
    _run_routes(app, reader, labeller)
    _compare_routes(app, reader)
    _other_routes(app, reader)
    add_label_routes(app, store, labeller, _info, _case)
    app.mount("/production", _production(spans_db, allowed_hosts))
    app.add_middleware(CsrfGuard)  # every POST (a label) needs the page's token
    app.add_middleware(SecurityHeaders)
    if token:
        app.add_middleware(TokenGate, token=token, server="view", env_var=ENV_VAR)
    # Added last, so it runs first: a foreign Host or Origin never reaches a route or the token check.
    app.add_middleware(HostGuard, allowed=allowed_hosts)
    return app


class Reader:
    """The store, and what the pages keep of it: the last few runs' case indexes, each
    run's predecessor, each run's point on the history charts, the last comparisons.
    Every key holds what changes while a run records (``_key``), so a finished run is
    read once and a live one again when a case arrives."""

    def __init__(self, store: RunStore, gate: GateConfig) -> None:
        self.store = store
        self.gate = gate
        # WHY only four: an index holds a row per case; the pages look at a run or two at a time.
        self._index = functools.lru_cache(maxsize=4)(self._read_index)
        self._previous: dict[str, str | None] = {}  # a run's predecessor on its dataset never changes
        # WHY kept: the paired bootstrap over two 10,000-case runs took 20 s (bench/results/view-pages-10k.txt).
        self.compared = functools.lru_cache(maxsize=4)(self._compare)
        # WHY apart from the indexes: the history charts 20 runs, and 20 lookups through the
        # four-run index cache evicted every one, so each history page read all 20 runs again.
        self.point = functools.lru_cache(maxsize=256)(self._point)
        # WHY kept, and computed once for callers that come together: the metrics of a
        # 100,000-case run took 24 s and 833 MB, and four requests at once ~100 s each.
        self._metrics: Memo[tuple[list[GoldenCase], str, str]] = Memo(size=4)

    def index_of(self, info: RunInfo) -> CaseIndex:
        return self._index(_key(info))

    def _read_index(self, key: tuple[str, int, str]) -> CaseIndex:
        return build_index(self.store.case_texts(key[0]))

    def metrics_page(self, info: RunInfo) -> str:
        """The run's metrics page, computed again only when the run or its dataset file changed.

        WHY the dataset is read inside the computation: four requests at once each
        read it before, got four lists, and so four keys computed side by side."""
        def compute() -> tuple[list[GoldenCase], str, str]:
            cases, note = metrics_page.dataset_cases(info)
            return cases, note, metrics_page.render(info, self.store.load_run(info.run_id))

        def fresh(kept: tuple[list[GoldenCase], str, str]) -> bool:
            # WHY the list's identity: dataset_cases hands out the same list while the file
            # is unchanged (an empty one is new each time: compared by the note alone).
            cases, note = metrics_page.dataset_cases(info)
            return note == kept[1] and (cases is kept[0] if cases else not kept[0])

        return self._metrics.get(_key(info), compute, fresh)[2]

    def previous(self, info: RunInfo) -> str | None:
        if info.run_id not in self._previous:
            self._previous[info.run_id] = _previous(self.store, info)
        return self._previous[info.run_id]

    def _point(self, key: tuple[str, int, str]) -> history_page.Point:
        return history_page.point_of(self._read_index(key))

    def _compare(self, base: tuple[str, int, str], cand: tuple[str, int, str], allow: bool) -> tuple[Comparison, Verdict]:
        stats = self.gate.statistics
        comparison = compare_runs(self.store.load_run(base[0]), self.store.load_run(cand[0]), allow, stats.alpha,
                                  stats.bootstrap_resamples, stats.seed)
        return comparison, decide(comparison, self.gate)


def _run_routes(app: FastAPI, reader: Reader, labeller: str) -> None:
    """The runs, a run's cases and files, a case."""
    store = reader.store

    @app.get("/", response_class=HTMLResponse)
    def runs(dataset: str = "", status: str = "", sort: str = "newest", page: int = 1) -> str:
        infos = store.runs(limit=RUNS_SHOWN)
        filters = runs_page.RunFilters(dataset, status, sort, page)
        kept = runs_page.chosen(infos, filters)
        shown, number, pages = paged(kept, page, runs_page.PAGE_SIZE)
        counts = store.status_counts([i.run_id for i in shown])  # WHY only these: it reads their every case
        return runs_page.render(infos, len(kept), shown, counts, filters, number, pages, store.url)

    @app.get("/runs/{run_id}", response_class=HTMLResponse)
    def run(run_id: str, status: str = "", split: str = "", code: str = "", q: str = "", page: int = 1) -> Response:
        info = _info(store, run_id)
        if info.run_id != run_id:  # a prefix, latest or previous: to the run's own address
            return RedirectResponse(run_url(info.run_id), status_code=307)
        index = reader.index_of(info)
        filters = Filters(status, split, code, q[:SEARCH_CHARS])
        return HTMLResponse(run_page.render(info, index, filters, index.page(filters, page, run_page.PAGE_SIZE),
                                            reader.previous(info)))

    @app.get("/runs/{run_id}/metrics", response_class=HTMLResponse)
    def metrics(run_id: str) -> str:
        return reader.metrics_page(_info(store, run_id))

    @app.get("/runs/{run_id}/results.json")
    def results(run_id: str) -> StreamingResponse:
        info = _info(store, run_id)
        name = f"results-{info.run_id}.json".replace('"', "")
        return StreamingResponse(_results_json(store, info), media_type="application/json",
                                 headers={"content-disposition": f'attachment; filename="{name}"'})

    @app.get("/runs/{run_id}/junit.xml")
    def junit_xml(run_id: str) -> Response:
        info = _info(store, run_id)
        return Response(junit.to_xml(store.load_run(info.run_id)), media_type="application/xml")

    @app.get("/runs/{run_id}/summary.md")
    def summary_md(run_id: str) -> Response:
        info = _info(store, run_id)
        return Response(markdown.to_markdown(store.load_run(info.run_id)), media_type="text/markdown; charset=utf-8")

    @app.get("/runs/{run_id}/cases/{case_id:path}", response_class=HTMLResponse)
    def case(request: Request, run_id: str, case_id: str, repeat: int = 0, annotator: str = "") -> Response:
        info = _info(store, run_id)
        result = _case(store, info.run_id, case_id, repeat)
        if result is None:
            return _missing(f"no case {case_id!r} (repetition {repeat}) in run {info.run_id}")
        others = [(i.run_id, i.manifest.agent_model, other) for i in store.runs(limit=OTHER_RUNS + 1, dataset=info.dataset)
                  if i.run_id != info.run_id and (other := _case(store, i.run_id, case_id, repeat)) is not None]
        reference, why = metrics_page.reference(info, case_id)
        given = [g for g in store.labels([info.run_id]) if (g.case_id, g.repeat) == (result.case_id, result.repeat)]
        named = annotator.strip()[:NAME_CHARS]
        back = case_url(info.run_id, result.case_id, result.repeat)
        back += (("&" if "?" in back else "?") + urlencode({"annotator": named})) if named else ""
        labels = case_labels(info.run_id, result, given, named or labeller, request.state.csrf, back)
        return HTMLResponse(case_page.render(info.run_id, result, others[:OTHER_RUNS],
                                             redact(reference) if reference else None, why, labels))


def _compare_routes(app: FastAPI, reader: Reader) -> None:
    """Two runs compared, and one case in both."""
    store = reader.store

    @app.get("/compare", response_class=HTMLResponse)
    def compare(baseline: str = "", candidate: str = "", allow_dataset_change: bool = False) -> str:
        infos = store.runs(limit=RUNS_SHOWN)
        if not baseline or not candidate:
            chooser = compare_page.chooser(infos, infos[1].run_id if len(infos) > 1 else "",
                                           infos[0].run_id if infos else "")
            return layout("Compare two runs", chooser, crumbs=[("runs", "/")], here="/compare")
        try:
            base, cand = (_info(store, ref) for ref in (baseline, candidate))
            comparison, verdict = reader.compared(_key(base), _key(cand), allow_dataset_change)
        except TracegradeError as exc:
            return layout("Compare two runs", compare_page.chooser(infos, baseline, candidate, str(exc)),
                          crumbs=[("runs", "/")], here="/compare")
        chooser = compare_page.chooser(infos, base.run_id, cand.run_id)
        return compare_page.render(comparison, verdict, reader.gate.statistics.alpha, chooser)

    @app.get("/compare/{baseline}/{candidate}/cases/{case_id:path}", response_class=HTMLResponse)
    def diff(baseline: str, candidate: str, case_id: str) -> str:
        base, cand = _info(store, baseline).run_id, _info(store, candidate).run_id
        return compare_page.render_diff(base, cand, case_id, _case(store, base, case_id, 0),
                                        _case(store, cand, case_id, 0))


def _other_routes(app: FastAPI, reader: Reader) -> None:
    """History and calibration."""
    store = reader.store

    @app.get("/history", response_class=HTMLResponse)
    def history(dataset: str = "") -> str:
        infos = store.runs(limit=RUNS_SHOWN)
        chosen = dataset or (infos[0].dataset if infos else "")
        recent, apart = history_page.charted([i for i in infos if i.dataset == chosen])
        return history_page.render(sorted({i.dataset for i in infos}), chosen,
                                   [(i, reader.point(_key(i))) for i in recent[::-1]], reader.gate, apart)  # oldest first

    @app.get("/calibration", response_class=HTMLResponse)
    def calibration() -> str:
        return calibration_page.render(store.calibrations())


def _key(info: RunInfo) -> tuple[str, int, str]:
    """What identifies a run's content: it changes only while the run records."""
    return info.run_id, info.cases_done, info.status


def _missing(problem: str) -> HTMLResponse:
    return HTMLResponse(layout("Not found", f'<section><p class="error" id="problem">{e(problem)}</p>'
                               '<p><a href="/">all runs</a></p></section>'), status_code=404)


def _info(store: RunStore, ref: str) -> RunInfo:
    """The run ``ref`` names: its id, a unique prefix, latest or previous, or the unique end of a
    recent run's id (the history charts label runs by it) (ConfigError, StoreError: a 404)."""
    try:
        return store.info(runref.resolve_id(store, ref))
    except TracegradeError:
        ending = [i for i in store.runs(limit=RUNS_SHOWN) if ref and ref not in runref.NAMES and i.run_id.endswith(ref)]
        if len(ending) != 1:
            raise
        return ending[0]


def _case(store: RunStore, run_id: str, case_id: str, repeat: int) -> CaseResult | None:
    """The stored case, redacted again on the way out. WHY again: a run recorded with
    TRACEGRADE_RAW_DATA=1 kept personal data in the store; a page is an export, as
    the HTML report is (report/html.py redacts on the way out too)."""
    text = store.case_text(run_id, case_id, repeat)
    if text is None:
        return None
    return CaseResult.from_json(redact_data(jsontext.load(text), STRUCTURE_KEYS, personal=True))


def _previous(store: RunStore, info: RunInfo) -> str | None:
    """The run recorded just before this one on the same dataset, if any."""
    ids = [i.run_id for i in store.runs(limit=RUNS_SHOWN, dataset=info.dataset)]
    at = ids.index(info.run_id) if info.run_id in ids else -1
    return ids[at + 1] if 0 <= at < len(ids) - 1 else None


def _results_json(store: RunStore, info: RunInfo) -> Iterator[str]:
    """The run as ``results.json`` holds it (manifest, then the stored cases), streamed."""
    yield '{\n  "manifest": ' + jsontext.dump(info.manifest.to_json()) + ',\n  "results": ['
    for number, text in enumerate(store.case_texts(info.run_id)):
        yield ("," if number else "") + "\n    " + text
    yield "\n  ]\n}\n"


class SecurityHeaders:
    """Every response may not be framed by another site, sniffed, or leak its address.

    WHY same-origin and not no-referrer: under no-referrer a browser sends ``Origin: null``
    with a form's POST, and the Origin check (HostGuard, csrf.py) rightly refuses that;
    same-origin still sends the address to no other site."""

    HEADERS = [(b"x-frame-options", b"DENY"), (b"content-security-policy", b"frame-ancestors 'none'"),
               (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"same-origin")]

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *self.HEADERS]}
            await send(message)

        await self.app(scope, receive, with_headers if scope["type"] == "http" else send)


def _production(spans_db: Path | None, allowed_hosts: Iterable[str]) -> ASGIApp:
    """The monitor's app for the span store, or a page saying there is none."""
    if spans_db is None or not Path(spans_db).exists():
        where = f"no span store at {spans_db}" if spans_db else "no span store given (--spans-db)"
        page = layout("Production traces", f"<section><p>{e(where)}: <code>shopnest serve</code> (or any agent "
                      "using tracegrade.observe.telemetry) records one.</p></section>", here="/production/")
        return HTMLResponse(page)
    from tracegrade.view.monitor.app import create_monitor_app
    from tracegrade.observe.spanstore import SpanStore

    # WHY an inner token: the monitor asks every request for one; the view has already
    # let this request in (Host, and its own token when it has one), so it vouches for it.
    inner = secrets.token_urlsafe(24)
    monitor = create_monitor_app(SpanStore(Path(spans_db)), inner, None, allowed_hosts)
    return _WithNav(_Vouched(monitor, inner), framing_nav("/production/").encode())


class _Vouched:
    """Passes requests to ``app`` with its bearer token set (replacing any the client sent)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.header = (b"authorization", f"Bearer {token}".encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = [h for h in scope["headers"] if h[0].lower() != b"authorization"]
            scope = {**scope, "headers": [*headers, self.header]}
        await self.app(scope, receive, send)


class _WithNav:
    """Puts the view's navigation bar at the top of every HTML page ``app`` answers,
    so the monitor's pages sit in the same UI without being rewritten."""

    def __init__(self, app: ASGIApp, nav: bytes) -> None:
        self.app = app
        self.nav = nav

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start: Message | None = None
        html = False
        chunks: list[bytes] = []

        async def framed(message: Message) -> None:
            nonlocal start, html
            if message["type"] == "http.response.start":
                start = message
                html = dict(message.get("headers", [])).get(b"content-type", b"").startswith(b"text/html")
                if not html:
                    await send(message)
                return
            if not html or message["type"] != "http.response.body":
                return await send(message)
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            body = b"".join(chunks).replace(b"<body>", b"<body>" + self.nav, 1)
            assert start is not None
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            await send({**start, "headers": [*headers, (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, framed)
