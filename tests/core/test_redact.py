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


# --- issue 17.5: every widely used secret format and kind of personal data ------------
# Fakes are assembled from parts so no scanner mistakes this file for a leak.
FORMATS = {
    "model hub token": ("hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz12", "[REDACTED_KEY]"),
    "model hub org token": ("api_org_" + "AbCdEfGhIjKlMnOpQrStUvWxYz12", "[REDACTED_KEY]"),
    "Google API key": ("AIza" + "SyA1234567890abcdefghijklmnopqrstu", "[REDACTED_KEY]"),
    "Google OAuth token": ("ya29." + "a0AfH6SMBx1234567890abcdefg", "[REDACTED_TOKEN]"),
    "AWS access key id": ("AKIA" + "IOSFODNN7EXAMPLE", "[REDACTED_KEY]"),
    "AWS secret in code": ("aws_secret_access_key = '" + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" + "'",
                           "aws_secret_access_key = '[REDACTED_KEY]'"),
    "Azure storage key": ("AccountKey=" + "a" * 86 + "==", "[REDACTED_KEY]"),
    "GitHub classic token": ("ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "[REDACTED_KEY]"),
    "GitHub fine-grained token": ("github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[REDACTED_KEY]"),
    "GitLab token": ("glpat-" + "xYz12AbC34dEf56GhI78", "[REDACTED_KEY]"),
    "Slack token": ("xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "[REDACTED_KEY]"),
    "Stripe live key": ("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "[REDACTED_KEY]"),
    "OpenAI key": ("sk-proj-" + "AbCdEf_1234567890abcdef", "[REDACTED_KEY]"),
    "Anthropic key": ("sk-ant-api03-" + "AbCdEf1234567890_xyz", "[REDACTED_KEY]"),
    "npm token": ("npm_" + "abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED_KEY]"),
    "PyPI token": ("pypi-" + "AgEIcHlwaS5vcmc" + "A" * 75, "[REDACTED_KEY]"),
    "SendGrid key": ("SG." + "a" * 22 + "." + "b" * 43, "[REDACTED_KEY]"),
    "JWT": ("eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0In0." + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9P", "[REDACTED_TOKEN]"),
    "basic auth header": ("Authorization: Basic " + "dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED_TOKEN]"),
    "basic auth alone": ("sent Basic " + "YWxhZGRpbjpvcGVuc2VzYW1l", "sent Basic [REDACTED_TOKEN]"),
    "bearer header": ("Authorization: Bearer " + "abc.def.ghi123", "Authorization: Bearer [REDACTED_TOKEN]"),
    "URL credentials": ("postgresql://app:" + "S3cretPassw0rd" + "@db:5432/x", "postgresql://app:[REDACTED_KEY]@db:5432/x"),
    "private key block": ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + "IBAAKCAQEA" * 5 + "\n-----END RSA PRIVATE KEY-----",
                          "[REDACTED_PRIVATE_KEY]"),
    "private key cut off": ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA", "[REDACTED_PRIVATE_KEY]"),
    "US social security number": ("SSN " + "123-45-6789", "SSN [REDACTED_SSN]"),
    "IBAN grouped": ("IBAN DE89 " + "3704 0044 0532 0130 00", "IBAN [REDACTED_IBAN]"),
    "IBAN compact": ("GB82WEST" + "12345698765432", "[REDACTED_IBAN]"),
    "IPv4": ("from 192.168.100.200", "from [REDACTED_IP]"),
    "IPv6": ("from 2001:db8::1", "from [REDACTED_IP]"),
    "IPv6 full": ("fe80:0:0:0:1ff:fe23:4567:890a", "[REDACTED_IP]"),
    "e-mail": ("ann.lee+x@example.co.uk", "[REDACTED_EMAIL]"),
    "card": ("4111 1111 1111 1111", "[REDACTED_CARD]"),
    "phone": ("+49 30 1234 5678", "[REDACTED_PHONE]"),
}


@pytest.mark.parametrize("name", FORMATS)
def test_each_secret_format_and_kind_of_personal_data_is_redacted(name):
    text, expected = FORMATS[name]
    assert redact(text) == expected


def test_the_issue_example_is_fully_redacted():
    text = ("hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz12 " + "AIza" + "SyA1234567890abcdefghijklmnopqrstu "
            "123-45-6789 2001:db8::1")
    assert redact(text) == "[REDACTED_KEY] [REDACTED_KEY] [REDACTED_SSN] [REDACTED_IP]"


@pytest.mark.parametrize("text", [
    "meet at 10:30:00 on 2026-05-01", "mac 00:1A:2B:3C:4D:5E", "slice x[::1]", "version 2026.10.1.5",
    "hf_hub_download and AIza", "SSN 000-12-3456 is never issued", "product AB12 CDEF GHIJ",
    "basic information about returns", "the authorization step", "ids 666-12-3456",
])
def test_look_alikes_are_left_alone(text):
    assert redact(text) == text


# --- issue 15.3: every secret the process is configured with, whatever its shape ------


def test_every_configured_secret_is_redacted_by_value(monkeypatch):
    monkeypatch.setenv("TRACEGRADE_TARGET_TOKEN", "plain-words-no-digits")
    monkeypatch.setenv("SOME_VENDOR_API_KEY", "lowercaseonlyvalue")
    monkeypatch.setenv("MY_SERVICE_SECRET", "Sesame Open Please")
    monkeypatch.setenv("TRACEGRADE_DB", "postgresql://u:hunter2hunter2@h/db")
    monkeypatch.setenv("SHORT_TOKEN", "abc")  # too short to redact without wrecking text
    text = ("401: you sent plain-words-no-digits; lowercaseonlyvalue; Sesame Open Please; "
            "hunter2hunter2; abc")
    assert redact(text) == "401: you sent [REDACTED_KEY]; [REDACTED_KEY]; [REDACTED_KEY]; [REDACTED_KEY]; abc"


def test_a_registered_secret_is_redacted():
    from tracegrade.core.redact import register_secret

    register_secret("registered-at-runtime")
    assert redact("x registered-at-runtime y") == "x [REDACTED_KEY] y"


def test_redact_data_keeps_structure_keys_and_can_keep_personal_data(monkeypatch):
    from tracegrade.core.redact import redact_data

    monkeypatch.setenv("TRACEGRADE_TARGET_TOKEN", "plain-words-no-digits")
    data = {"caseId": "ann@example.com", "answer": "mail ann@example.com", "nested": [{"error": "plain-words-no-digits"}]}
    assert redact_data(data, keep=frozenset({"caseId"})) == {
        "caseId": "ann@example.com", "answer": "mail [REDACTED_EMAIL]", "nested": [{"error": "[REDACTED_KEY]"}]}
    raw = redact_data(data, personal=False)
    assert raw["answer"] == "mail ann@example.com" and raw["nested"][0]["error"] == "[REDACTED_KEY]"


def test_redact_data_writes_keys_that_are_not_text_as_storable_does_and_redacts_them():
    from tracegrade.core.redact import redact_data

    data = {1: "x", None: "y", ("a",): "z", 2.5: [float("nan")], "write to ann@mail.example.com": True}
    assert redact_data(data) == {"1": "x", "null": "y", "[tuple key]": "z", "2.5": [None],
                                 "write to [REDACTED_EMAIL]": True}


def test_a_long_text_is_redacted_the_same_from_the_cache_and_a_new_secret_reaches_it(monkeypatch):
    """Long texts (an agent's retrieved context) are cached too; the secrets known are part of the key."""
    from tracegrade.core.redact import redact_data

    context = "Refund policy. " * 100 + "Write to ann@example.com. Token tok-LONGCACHE-0123456789abcdef. " * 3
    assert 512 < len(context) < 16_000
    first = redact_data({"context": context})["context"]
    assert "ann@example.com" not in first and "tok-LONGCACHE" not in first
    assert redact_data({"context": context})["context"] == first  # from the cache: the same text
    monkeypatch.setenv("LONGCACHE_API_KEY", "Refund policy")  # a secret that appears in the cached text
    assert "Refund policy" not in redact_data({"context": context})["context"]


def test_distinct_personal_values_in_one_text_get_distinct_markers():
    """A failure must say which value differed without showing either (issue 25)."""
    from tracegrade.core.redact import redact

    text = "expected ann@example.com, got bob@example.com (ann@example.com again); 4111 1111 1111 1111"
    assert redact(text) == ("expected [REDACTED_EMAIL], got [REDACTED_EMAIL#2] ([REDACTED_EMAIL] again); "
                            "[REDACTED_CARD]")
    assert redact("expected ann@example.com, got ann@example.com") == \
        "expected [REDACTED_EMAIL], got [REDACTED_EMAIL]"  # the same value: the same marker


# --- issue 37: the screens that let a text no pattern can match through at once -------

_PIECES = (
    "sk-", "pk_", "key-", "api_", "tok-", "AKIA", "A3TX", "ASIA", "ghp_", "github_pat_", "glpat-", "glcbt-", "GR1348941",
    "xoxb-", "npm_", "hf_", "api_org_", "AIza", "ya29.", "eyJ", ".", "Bearer ", "bEaReR\t", "Basic ", "Authorization: ",
    "password=", "PassWD: ", "client_secret=", "auth_token", "SECRET", "Token\u000b:", "key\x1c=", "\u212aey=", "pa\u017f\u017fword=",
    "AccountKey=", "://user:", "@", "ann", "example.com", "+44 ", "0", "7", "12", "345", "6789", "\u0663\u0664\u0665",
    "\uff11\uff12\uff13", "-", " ", ":", "::", "fe80", "192.168.", "DE89", "GB82WEST", "(555) ", "4111 ", "SG.", "sq0csp-",
    "AC", "SK", "https://hooks.slack.com/services/T", "/B", "_", "abcdefghij", "ABCDEFGHIJKLMNOP", "ORD-101", "\n",
    "-----BEGIN PRIVATE KEY-----", "\udcff", "é", "ſ", "K",
)


def _texts(count: int, seed: int) -> list[str]:
    import random

    rng = random.Random(seed)
    return ["".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 14))) for _ in range(count)]


def test_screened_redaction_equals_every_pattern_run(monkeypatch):
    """A text is let through unchanged only when no pattern could match it: the screens never
    change what redaction gives, on the texts above and on random mixes of what the patterns look for."""
    import re

    from tracegrade.core import redact as module

    cases = [text for text, _ in FORMATS.values()] + _texts(4000, 37) + [
        "Where is my order ORD-101? (ticket 12345)", "Your order ORD-101 is on its way.",
        "key sk-abcdefghijklmnop1234 mail ann@example.com", "call +49 30 1234 5678 now", "ip 192.168.100.200"]
    known = module._all_secrets(())
    screened = [(module._clean(text, known, True), module._clean(text, known, False)) for text in cases]
    monkeypatch.setattr(module, "_FORMATS_SCREEN", re.compile(""))
    monkeypatch.setattr(module, "_PERSONAL_SCREEN", re.compile(""))
    monkeypatch.setattr(module, "_vendor_screen", lambda: (None, {}))
    monkeypatch.setattr(module, "_nothing_to_redact", lambda text, personal: False)
    every = [(module._clean(text, known, True), module._clean(text, known, False)) for text in cases]
    assert screened == every
    assert sum(a != text for (a, _), text in zip(screened, cases)) > 1000  # the mixes do hold secrets
    assert sum(text.isascii() and a == text for (a, _), text in zip(screened, cases)) > 500  # and ASCII ones none


class _Kind(__import__("enum").Enum):
    A = "x"


class _Text(str):
    pass


@pytest.mark.parametrize("data", [
    {"a": "Your order ORD-101 is on its way.", "b": [1, 2.5, None, True, -0.0, 1e300], "case_id": "ann@example.com"},
    {"a": float("nan")}, {"a": [float("inf")]}, {"a": _Kind.A}, {"a": _Text("hello world")}, {1: "x"}, {"a": 2 ** 70},
    {"a": __import__("uuid").UUID(int=7)}, {"a": __import__("datetime").date(2020, 1, 1)}, {"a": "mail ann@example.com"},
    {"a": 'quote " and \\ back'}, {"a": "x\ud800y"}, {"a": (1, 2)}, {"a": {"b": [[[]]]}}, {"deep": [[[[[]]]]] * 30},
    {"mail ann@example.com": 1}, {"a": __import__("orjson").Fragment(b'{"x":1}')},
])
def test_the_quick_way_round_the_walk_gives_what_the_walk_gives(data):
    """redacted_json takes a plain value's own JSON when redaction leaves all of it as it is."""
    from tracegrade.core import jsontext
    from tracegrade.core.redact import redact_data_checked, redacted_json

    keep = frozenset({"case_id"})
    walked, same = redact_data_checked(data, keep)
    assert redacted_json(data, keep) == (jsontext.dump(walked, sort_keys=True), same)
