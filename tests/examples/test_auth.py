"""Customer authentication on /chat (issue 15.1 and 15.13): the bearer token says
who is asking; only the eval harness's test mode lets the body say it."""

from __future__ import annotations

import re

import httpx
import pytest

from shopnest.agent import ShopNestAgent
from shopnest.app import create_app
from shopnest.auth import CustomerTokens, TestMode, add_token, digest
from shopnest.orders import OrderBook
from shopnest.tools import NOT_FOUND
from support import serving
from tracegrade.core.errors import ConfigError
from tracegrade.models import ChatResponse, Message, ModelToolCall
from tracegrade.models.scripted import ScriptedModel

ORDER_ID = re.compile(r"ORD-\d+")
TOKENS = {"tok-ann-C100-0123456789": "C-100", "tok-bob-C200-0123456789": "C-200", "tok-cy-C300-0123456789": "C-300"}


def look_up(messages: list[Message], options) -> ChatResponse:
    question = next(m.content for m in messages if m.role == "user")
    results = [m.content for m in messages if m.role == "tool"]
    if results:
        return ChatResponse(text=results[-1])
    return ChatResponse(tool_calls=(ModelToolCall("getOrderStatus", {"orderId": ORDER_ID.search(question).group()},
                                                  id="1"),))


@pytest.fixture
def shop(fake_knowledge):
    agent = ShopNestAgent(ScriptedModel(look_up), fake_knowledge, OrderBook(), tool_timeout_s=0.2)
    with serving(create_app(agent, CustomerTokens.of(TOKENS))) as url:
        yield url


def ask(url: str, body: dict, token: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.post(f"{url}/chat", json=body, headers=headers, timeout=30)


def test_the_body_cannot_choose_the_customer(shop):
    # The attack: anyone who reaches /chat names C-200 and reads ORD-109.
    anonymous = ask(shop, {"question": "Where is ORD-109?", "customerId": "C-200"})
    chosen = ask(shop, {"question": "Where is ORD-109?", "customerId": "C-200"}, "tok-cy-C300-0123456789")
    assert anonymous.status_code == 401
    assert chosen.status_code == 422
    assert chosen.json()["problems"] == [
        "customerId: not accepted: the customer is the bearer token's; only test mode takes it from the body"]
    assert "smart watch" not in anonymous.text + chosen.text and "DELIVERED" not in anonymous.text + chosen.text


def test_each_token_reads_only_its_own_customers_orders(shop):
    other = ask(shop, {"question": "Where is ORD-109?"}, "tok-cy-C300-0123456789")
    own = ask(shop, {"question": "Where is ORD-109?"}, "tok-bob-C200-0123456789")
    [call] = other.json()["toolCalls"]
    assert (call["status"], call["result"]) == ("denied", NOT_FOUND)
    assert own.json()["toolCalls"][0]["status"] == "ok" and "DELIVERED" in own.json()["answer"]


@pytest.mark.parametrize("header", ["", "Bearer", "Bearer wrong-token", "Basic tok-ann-C100-0123456789",
                                    "tok-ann-C100-0123456789"])
def test_every_request_needs_a_valid_customer_token(shop, header):
    response = httpx.post(f"{shop}/chat", json={"question": "Where is ORD-101?"},
                          headers={"Authorization": header} if header else {})
    assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
    assert httpx.get(f"{shop}/health", headers={"Authorization": header} if header else {}).status_code == 401


def test_faults_are_refused_outside_test_mode(shop):
    # Issue 15.13: a "hang" fault held a production request 5 s.
    response = ask(shop, {"question": "Where is ORD-101?", "faults": {"getOrderStatus": "hang"}},
                   "tok-ann-C100-0123456789")
    assert response.status_code == 422
    assert response.json()["problems"] == [
        "faults: not accepted: fault injection exists only in test mode (shopnest serve --test-mode)"]


def test_test_mode_takes_the_customer_and_faults_from_the_body(fake_knowledge):
    agent = ShopNestAgent(ScriptedModel(look_up), fake_knowledge, OrderBook(), tool_timeout_s=0.2)
    with serving(create_app(agent, TestMode("harness-token-0123"))) as url:
        owner = ask(url, {"question": "Where is ORD-109?", "customerId": "C-200"}, "harness-token-0123")
        faulty = ask(url, {"question": "Where is ORD-109?", "customerId": "C-200",
                           "faults": {"getOrderStatus": "timeout"}}, "harness-token-0123")
        anonymous = ask(url, {"question": "Where is ORD-109?", "customerId": "C-200"})
    assert owner.json()["toolCalls"][0]["status"] == "ok"
    assert faulty.json()["toolCalls"][0]["status"] == "error"
    assert anonymous.status_code == 401


def test_a_tokens_file_keeps_only_digests(tmp_path):
    path = tmp_path / "tokens"
    token = add_token(path, "C-100")
    assert token not in path.read_text() and f"C-100 {digest(token)}" in path.read_text()
    assert CustomerTokens.from_file(path).customer_for(token) == "C-100"
    assert oct(path.stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("text, problem", [
    ("C-100 not-a-digest\n", "line 1: expected 'CUSTOMER_ID SHA256_HEX'"),
    ("# only a comment\n", "no tokens"),
])
def test_a_bad_tokens_file_names_the_file_and_line(tmp_path, text, problem):
    path = tmp_path / "tokens"
    path.write_text(text)
    with pytest.raises(ConfigError, match=problem) as caught:
        CustomerTokens.from_file(path)
    assert str(path) in str(caught.value)


def test_shopnest_token_prints_a_token_that_works(tmp_path, capsys, fake_knowledge):
    from shopnest.cli import main

    path = tmp_path / "tokens"
    assert main(["token", "C-200", "--tokens-file", str(path)]) == 0
    token = capsys.readouterr().out.strip()
    agent = ShopNestAgent(ScriptedModel(look_up), fake_knowledge, OrderBook())
    with serving(create_app(agent, CustomerTokens.from_file(path))) as url:
        assert ask(url, {"question": "Where is ORD-109?"}, token).json()["toolCalls"][0]["status"] == "ok"


def test_a_foreign_host_never_reaches_chat(shop):
    # Issue 15.4: DNS rebinding from a browser on this machine.
    port = shop.rsplit(":", 1)[1]
    response = httpx.post(f"{shop}/chat", json={"question": "Where is ORD-101?"},
                          headers={"Host": f"attacker.example:{port}", "Authorization": "Bearer tok-ann-C100-0123456789"})
    assert response.status_code == 400 and "toolCalls" not in response.text


async def test_the_http_target_runs_a_plain_case_against_customer_mode(fake_knowledge):
    """A case that names no customer and no faults needs no test mode: it asks as the token's customer."""
    from tracegrade.case.schema import GoldenCase
    from tracegrade.agent.targets import http_target

    agent = ShopNestAgent(ScriptedModel(look_up), fake_knowledge, OrderBook())
    with serving(create_app(agent, CustomerTokens.of(TOKENS))) as url:
        ask_as_bob = http_target(f"{url}/chat", token="tok-bob-C200-0123456789")
        reply = await ask_as_bob(GoldenCase(id="c", question="Where is ORD-109?"))
    assert reply.tool_calls[0].status == "ok"
