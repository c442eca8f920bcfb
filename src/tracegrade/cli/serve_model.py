"""`tracegrade serve-model`: the embedded local model (or any model spec) as an
OpenAI-compatible endpoint on loopback, so any agent runs offline on it."""

from __future__ import annotations

import argparse
from typing import Any
import sys




def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "serve-model", help="serve the local model as an OpenAI-compatible endpoint (chat completions, tools)",
        description="Serve a model as an OpenAI-compatible endpoint: POST /v1/chat/completions (messages, tools "
        "answered as tool_calls, response_format json_schema, logprobs, stream) and GET /v1/models. Point any "
        "agent at it: OPENAI_BASE_URL=http://127.0.0.1:PORT/v1 OPENAI_API_KEY=local. The default model is the "
        "embedded Qwen2.5-Coder-1.5B on the CPU (the 'local' extra); requests run one at a time. Binds "
        "127.0.0.1; another interface needs TRACEGRADE_MODEL_TOKEN, which clients then send as their API key.",
    )
    p.add_argument("--model", default="local",
                   help="model spec: local (default), local:/path.gguf, openai:MODEL, anthropic:MODEL")
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8300, help="port (default 8300)")
    from tracegrade.serve.hardening import add_server_flags

    add_server_flags(p, "TRACEGRADE_MODEL")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from tracegrade.models import load_model
    from tracegrade.serve.model_server import create_model_app
    from tracegrade.serve.hardening import (HostGuard, bearer_token, other_names_hint, public_url, serve,
                                            server_settings)

    token = bearer_token(args.host, "TRACEGRADE_MODEL_TOKEN")
    allowed_hosts, limits = server_settings(args, "TRACEGRADE_MODEL")
    model = load_model(args.model, role="agent")
    where = public_url(args.host, args.port, loopback="127.0.0.1") + "/v1"
    print(f"tracegrade serve-model: {model.model_id} at {where}  "
          f"(OPENAI_BASE_URL={where} OPENAI_API_KEY={'$TRACEGRADE_MODEL_TOKEN' if token else 'local'})",
          file=sys.stderr)
    if hint := other_names_hint(args.host, "TRACEGRADE_MODEL"):
        print(f"tracegrade serve-model: {hint}", file=sys.stderr)
    serve(HostGuard(create_model_app(model, token), allowed_hosts), args.host, args.port, limits)
    return 0
