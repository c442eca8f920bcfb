"""A scripted travel agent, and a broken variant of it, for evals/travel/dataset.json.

    PYTHONPATH=. tracegrade run evals/travel/dataset.json --target examples.travel.agent:scripted --checks-only
"""
