"""ShopNest: a small customer-support agent (RAG + tools) that returns a trace.

The reference system under test for tracegrade, and the example to copy.
"""
