import pytest

from tracegrade.core.redact import redact


@pytest.mark.parametrize(
    "text, expected",
    [
        ("key sk-abcdefghijklmnop1234 mail ann@example.com", "key [REDACTED_KEY] mail [REDACTED_EMAIL]"),
        ("sk-proj-AbCdEf_1234567890abcdef", "[REDACTED_KEY]"),
        ("Authorization: Bearer abc.def.ghi123", "Authorization: Bearer [REDACTED_TOKEN]"),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9P", "jwt [REDACTED_TOKEN]"),
        ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED_KEY]"),
        ("xoxb-1234-5678-abcdefghijkl", "[REDACTED_KEY]"),
        ("aws AKIAABCDEFGHIJKLMNOP", "aws [REDACTED_KEY]"),
        ("password: hunter2, ok", "password: [REDACTED_KEY], ok"),
        ("API_KEY=abc123", "API_KEY=[REDACTED_KEY]"),
        ("mail ann.lee+x@example.co.uk now", "mail [REDACTED_EMAIL] now"),
        ("card 4111 1111 1111 1111 ok", "card [REDACTED_CARD] ok"),
        ("card 4111-1111-1111-1111.", "card [REDACTED_CARD]."),
        ("call +49 30 1234 5678 now", "call [REDACTED_PHONE] now"),
        ("phone (555) 123-4567.", "phone [REDACTED_PHONE]."),
        ("ip 192.168.100.200", "ip [REDACTED_IP]"),
        ("token=abcdEFGH1234 and auth_token: xyz12345", "token=[REDACTED_KEY] and auth_token: [REDACTED_KEY]"),
        ("client_secret=abc", "client_secret=[REDACTED_KEY]"),
        ("mobile 07700 900123.", "mobile [REDACTED_PHONE]."),
        ("appelez +33 6 12 34 56 78", "appelez [REDACTED_PHONE]"),
    ],
)
def test_secrets_and_personal_data_are_replaced(text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Order ORD-102 was delivered on 2026-05-26 (20 days ago).",
        "Refund draft RD-102 created for ORD-102.",
        "at 2026-11-30T07:37:12 after 1732950000000 ms",  # a timestamp is not a card (fails Luhn)
        "Express shipping costs 9.90 EUR; 812 in / 64 out tokens, 6.4 s",
        "version 2026.10.11549, 1,117,320,768 bytes",
        "sha256 cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "key-performance-indicators and api-compatible-endpoints",  # prose, no digits
        "tokens: 812",
        "in 0 12 days, +1 2 points, scores 0.7123 and 0.4211",
    ],
)
def test_ordinary_trace_text_is_left_alone(text):
    assert redact(text) == text


def test_known_secret_values_are_replaced_whatever_their_shape():
    assert redact("token is hunter2hunter2 here", secrets=("hunter2hunter2", "")) == "token is [REDACTED_KEY] here"
