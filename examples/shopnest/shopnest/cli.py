"""`shopnest ask`, `shopnest serve` and `shopnest token`."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

from shopnest.orders import DEFAULT_CUSTOMER
from tracegrade.core.errors import ConfigError, TracegradeError
from tracegrade.core.trace import Reply
from tracegrade.serve.hardening import LOOPBACK_NAMES, add_server_flags, server_settings

DEFAULT_TOKENS_FILE = Path(".shopnest/tokens")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.command(args)
    except TracegradeError as exc:
        from tracegrade.core.redact import redact_secrets  # a driver's message may quote a secret

        print(f"shopnest: {type(exc).__name__}: {redact_secrets(str(exc))}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="shopnest",
        description="ShopNest, the reference support agent: answers with a trace of what it did.",
    )
    sub = parser.add_subparsers(required=True, metavar="COMMAND")
    model_help = "agent model: local (default), local:/path.gguf, openai:MODEL, anthropic:MODEL (env TRACEGRADE_AGENT_MODEL)"

    ask = sub.add_parser("ask", help="answer one question and show the trace")
    ask.add_argument("question")
    ask.add_argument("--customer", default=DEFAULT_CUSTOMER, help=f"customer id asking (default {DEFAULT_CUSTOMER})")
    ask.add_argument("--agent-model", help=model_help)
    ask.add_argument("--top-k", type=int, default=1, help="policy files to retrieve (default 1)")
    ask.add_argument("--prompt-version", help="system prompt version: v1 (default) or terse")
    ask.add_argument("--json", action="store_true", help="print the Reply in the trace contract's wire form")
    ask.set_defaults(command=_ask)

    serve = sub.add_parser(
        "serve", help="serve POST /chat and GET /health over HTTP",
        description="Serve the agent. Every request needs a customer's bearer token (SHOPNEST_TOKENS_FILE, "
        "see `shopnest token`); the token says which customer is asking. --test-mode is for the eval harness "
        "only: the body names the customer and may inject tool faults, on loopback only.")
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    serve.add_argument("--agent-model", help=model_help)
    serve.add_argument("--top-k", type=int, default=1)
    serve.add_argument("--prompt-version", help="system prompt version: v1 (default) or terse")
    serve.add_argument("--tokens-file", type=Path, help="customer tokens (env SHOPNEST_TOKENS_FILE)")
    serve.add_argument("--test-mode", action="store_true",
                       help="for the eval harness: the body names the customer (customerId) and tool faults; "
                       "loopback only; SHOPNEST_API_TOKEN, if set, is required of every request")
    add_server_flags(serve, "SHOPNEST")
    serve.set_defaults(command=_serve)

    token = sub.add_parser("token", help="make a customer's bearer token and add it to the tokens file",
                           description="Prints the new token once; the tokens file keeps only its SHA-256.")
    token.add_argument("customer", help="the customer id the token speaks for, e.g. C-100")
    token.add_argument("--tokens-file", type=Path, help="tokens file (env SHOPNEST_TOKENS_FILE; default "
                       f"{DEFAULT_TOKENS_FILE})")
    token.set_defaults(command=_token)
    return parser


def _ask(args: argparse.Namespace) -> int:
    from shopnest.factory import build_agent

    from tracegrade.models import model_spec

    # WHY these lines: a cold start joins 1.1 GB of weights and loads two models,
    # tens of seconds in which a silent terminal looks hung.
    say(f"loading the agent ({model_spec('agent', args.agent_model)}) and the retrieval model...")
    loading = time.perf_counter()
    agent = build_agent(args.agent_model, args.top_k, args.prompt_version)
    say(f"loaded in {time.perf_counter() - loading:.1f} s; thinking (retrieval, tool calls, answer)...")
    started = time.perf_counter()
    reply = asyncio.run(agent.chat(args.question, args.customer))
    seconds = time.perf_counter() - started
    say(f"answered in {seconds:.1f} s after {sum(s.kind == 'model' for s in reply.steps)} model rounds")
    print(json.dumps(reply.to_wire(), indent=2) if args.json else format_reply(reply, seconds))
    return 0


def say(message: str) -> None:
    print(f"shopnest: {message}", file=sys.stderr, flush=True)


def format_reply(reply: Reply, seconds: float) -> str:
    sources = ", ".join(f"{s} ({score:.2f})" for s, score in zip(reply.retrieved_sources, reply.retrieval_scores))
    lines = [f"answer   {reply.answer}", f"sources  {sources or '-'}"]
    calls = [f"{c.name}({c.argument or ''}) -> {c.result}  [{c.status}]" for c in reply.tool_calls]
    lines.append("tools    " + ("\n         ".join(calls) if calls else "-"))
    lines.append(
        f"model    {reply.model}  {reply.usage.input_tokens} in / {reply.usage.output_tokens} out tokens  {seconds:.1f} s"
    )
    return "\n".join(lines)


def _serve(args: argparse.Namespace) -> int:
    from shopnest.app import create_app
    from shopnest.factory import build_agent
    from tracegrade.serve.hardening import serve
    from tracegrade.observe.telemetry import open_telemetry

    auth = _auth(args)
    allowed_hosts, limits = server_settings(args, "SHOPNEST")
    agent = build_agent(args.agent_model, args.top_k, args.prompt_version)
    # Every request's trace goes to the local span store (env TRACEGRADE_SPANS_DB) for
    # `tracegrade monitor`, and over OTLP too when OTEL_EXPORTER_OTLP_ENDPOINT is set.
    telemetry = open_telemetry("shopnest")
    try:
        serve(create_app(agent, auth, telemetry.tracer, allowed_hosts), args.host, args.port, limits)
    finally:
        telemetry.shutdown()
    return 0


def _auth(args: argparse.Namespace):
    from shopnest.auth import CustomerTokens, TestMode

    if args.test_mode:
        if args.host not in LOOPBACK_NAMES:
            # WHY refuse: in test mode the body says who is asking.
            raise ConfigError(f"--test-mode lets a request name any customer: it serves loopback only, "
                              f"not --host {args.host}")
        return TestMode(os.environ.get("SHOPNEST_API_TOKEN") or None)
    path = args.tokens_file or os.environ.get("SHOPNEST_TOKENS_FILE")
    if not path:
        raise ConfigError("every request must say which customer is asking: give a tokens file "
                          "(--tokens-file or SHOPNEST_TOKENS_FILE; add tokens with `shopnest token CUSTOMER_ID`), "
                          "or --test-mode for the eval harness on this machine")
    return CustomerTokens.from_file(path)


def _token(args: argparse.Namespace) -> int:
    from shopnest.auth import add_token

    path = args.tokens_file or Path(os.environ.get("SHOPNEST_TOKENS_FILE") or DEFAULT_TOKENS_FILE)
    token = add_token(path, args.customer)
    print(f"added a token for {args.customer} to {path}; it is shown only now:", file=sys.stderr)
    print(token)
    return 0
