"""Capture: grade the agent a user already has, with no hand-written trace.

``captured_target(function, ("openai",))`` runs ``function`` per case with the
SDK's model calls (or the agent's OpenTelemetry spans) recorded, and builds the
case's Reply from them. See docs/agents.md.
"""

from tracegrade.agent.capture.target import SOURCES, captured_target

__all__ = ["SOURCES", "captured_target"]
