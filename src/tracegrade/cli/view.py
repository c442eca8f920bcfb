"""`tracegrade view`: one local web UI over the run store (runs, cases, traces,
comparisons, history, calibration) and the span store (production traces)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any



def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "view", help="serve a local web UI over the runs, cases, traces, comparisons and production traces",
        description="A web UI over the run store: every run, its cases a page at a time (filters: failed only, "
        "check code, split), each case's checks, metrics and trace as a timeline, the case in other runs, two "
        "runs compared with the gate's verdict and per-case diffs, history charts, the latest judge "
        "calibrations, and the monitor's production pages under /production/. A case page and a run's label "
        "queue (keys g good, b bad, s skip, n next, u change the last) label answers good or bad per metric, "
        "stored with the run for `tracegrade calibrate --from-store`. Binds 127.0.0.1; another address needs TRACEGRADE_VIEW_TOKEN.",
    )
    p.add_argument("--db", help="run store URL (env TRACEGRADE_DB; default sqlite:///.tracegrade/runs.db)")
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8200, help="port (default 8200)")
    p.add_argument("--spans-db", type=Path, help="span store for the production pages "
                   "(env TRACEGRADE_SPANS_DB; default .tracegrade/spans.db)")
    p.add_argument("--gate", type=Path, help="gate thresholds TOML for comparisons and history (default: the shipped one)")
    p.add_argument("--annotator", help="the name labels are given under unless a page names another "
                   "(default: your login name)")
    from tracegrade.serve.hardening import add_server_flags

    add_server_flags(p, "TRACEGRADE_VIEW")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from tracegrade.compare.gate import load_gate
    from tracegrade.serve.hardening import bearer_token, other_names_hint, public_url, serve, server_settings
    from tracegrade.observe.telemetry import DEFAULT_SPANS_DB
    from tracegrade.store.runstore import open_store
    from tracegrade.view.app import ENV_VAR, create_view_app

    token = bearer_token(args.host, ENV_VAR)
    allowed_hosts, limits = server_settings(args, "TRACEGRADE_VIEW")
    gate = load_gate(args.gate)
    spans = args.spans_db or Path(os.environ.get("TRACEGRADE_SPANS_DB") or DEFAULT_SPANS_DB)
    store = open_store(args.db)
    where = public_url(args.host, args.port)
    login = f"; log in with {ENV_VAR} at {where}/login" if token else ""
    print(f"tracegrade view: {where}/ over {store.url} and {spans}{login}", file=sys.stderr)
    if hint := other_names_hint(args.host, "TRACEGRADE_VIEW"):
        print(f"tracegrade view: {hint}", file=sys.stderr)
    try:
        serve(create_view_app(store, spans, token, allowed_hosts, gate, args.annotator), args.host, args.port, limits)
    finally:
        store.close()
    return 0
