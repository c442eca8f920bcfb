"""`tracegrade monitor`: the dashboard over production traces in the local span store."""

from __future__ import annotations

import argparse
from typing import Any
import os
import sys
from pathlib import Path

from tracegrade.core.errors import ConfigError



def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "monitor", help="serve a dashboard over the production traces in the local span store",
        description="A web dashboard over the requests `shopnest serve` (or any agent using tracegrade.observe.telemetry) "
        "recorded: volume, success and errors, latency percentiles, failures by tool and provider, steps, "
        "duplicate calls, tokens and spend, guardrail blocks, approvals, a sampled online judge, and a "
        "golden-case draft from any trace. Binds 127.0.0.1; elsewhere it needs TRACEGRADE_MONITOR_TOKEN.",
    )
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8100, help="port (default 8100)")
    p.add_argument("--spans-db", type=Path, help="span store (env TRACEGRADE_SPANS_DB; default .tracegrade/spans.db)")
    p.add_argument("--judge-sample", type=float, default=0.1, metavar="RATE",
                   help="share of answered requests the online judge scores, 0 to 1 (default 0.1; 0 turns it off)")
    p.add_argument("--judge-model", help="judge model: local (default), local:/path.gguf, openai:MODEL, anthropic:MODEL "
                   "(env TRACEGRADE_JUDGE_MODEL)")
    p.add_argument("--rubric", type=Path, help="judge rubric file (default: the shipped judge-rubric.md)")
    from tracegrade.serve.hardening import add_server_flags

    add_server_flags(p, "TRACEGRADE_MONITOR")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    import secrets

    from tracegrade.view.monitor.app import create_monitor_app
    from tracegrade.serve.hardening import bearer_token, other_names_hint, public_url, serve, server_settings
    from tracegrade.observe.spanstore import SpanStore
    from tracegrade.observe.telemetry import DEFAULT_SPANS_DB

    token = bearer_token(args.host, "TRACEGRADE_MONITOR_TOKEN")
    if not 0 <= args.judge_sample <= 1:
        raise ConfigError(f"--judge-sample must be between 0 and 1, got {args.judge_sample}")
    allowed_hosts, limits = server_settings(args, "TRACEGRADE_MONITOR")
    store = SpanStore(args.spans_db or Path(os.environ.get("TRACEGRADE_SPANS_DB") or DEFAULT_SPANS_DB))
    judge = _online_judge(store, args) if args.judge_sample > 0 else None
    where = public_url(args.host, args.port)
    if hint := other_names_hint(args.host, "TRACEGRADE_MONITOR"):
        print(f"tracegrade monitor: {hint}", file=sys.stderr)
    if token:
        print(f"tracegrade monitor: {where}/ over {store.path}; log in with TRACEGRADE_MONITOR_TOKEN at {where}/login",
              file=sys.stderr)
    else:
        # WHY a token even on loopback: any web page in this machine's browser can reach loopback.
        # The fragment (#) never reaches the server or its logs; the page removes it from history.
        token = secrets.token_urlsafe(24)
        print(f"tracegrade monitor: {store.path}; open {where}/login#token={token}  (a new token each start; "
              f"set TRACEGRADE_MONITOR_TOKEN to keep one)", file=sys.stderr)
    serve(create_monitor_app(store, token, judge, allowed_hosts), args.host, args.port, limits)
    return 0


def _online_judge(store: Any, args: argparse.Namespace) -> Any:
    from tracegrade.judge.scoring import Judge, load_rubric
    from tracegrade.models import load_model, model_spec
    from tracegrade.view.monitor.judging import OnlineJudge

    spec, rubric = model_spec("judge", args.judge_model), load_rubric(args.rubric)
    return OnlineJudge(store, lambda: Judge(load_model(spec, role="judge"), rubric), rate=args.judge_sample)
