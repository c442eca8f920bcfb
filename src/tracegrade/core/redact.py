"""Redaction of secrets and personal data before anything is stored, exported or printed.

    >>> redact("key sk-abcdefghijklmnop1234 mail ann@example.com")
    'key [REDACTED_KEY] mail [REDACTED_EMAIL]'

Three layers, applied in this order:

1. **Configured secrets**, by value, whatever their shape: every environment
   variable whose name says it holds one (``*_TOKEN``, ``*_API_KEY``,
   ``*_SECRET``, ``*_PASSWORD``, ...), the password of any URL in the
   environment, and values registered at run time (``register_secret``).
2. **Secret formats**: the vendor token detectors of detect-secrets (a
   maintained rule set: AWS, Azure, GitHub, GitLab, Slack, Stripe, npm, PyPI,
   OpenAI, SendGrid, Twilio, ...), plus the formats it lacks (model-hub and
   Google API keys, fine-grained GitHub tokens, JWTs, ``Authorization``
   headers, private key blocks, ``key=value`` assignments).
3. **Personal data**: IBAN (mod-97 checked), card numbers (Luhn checked), US
   social security numbers, e-mail, IPv4 and IPv6 addresses, phone numbers.

WHY this order: a token's or an IBAN's digits must never be half-redacted as a
phone number.
"""

from __future__ import annotations

import bisect
import functools
import ipaddress
import json
import math
import os
import re
import warnings
from typing import Any, Callable, Iterable, Mapping

import orjson

from tracegrade.core import jsontext
from tracegrade.core.storable import INT64, clean_text, storable, storable_key

KEY, TOKEN = "[REDACTED_KEY]", "[REDACTED_TOKEN]"

# Environment variable names that hold a secret value.
_SECRET_NAME = re.compile(r"(?i)(?:TOKEN|API_?KEY|SECRET|PASSWORD|PASSWD|PRIVATE_KEY|ACCESS_KEY|CREDENTIALS?)$")
_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*:([^\s/@]+)@")
# WHY a minimum length: a secret of "1" or "true" would redact every "1" or "true".
MIN_SECRET_CHARS = 8
_registered: set[str] = set()


def register_secret(value: str | None) -> None:
    """Redact ``value`` everywhere from now on (e.g. a password given in a ``--db`` URL)."""
    if value and len(value) >= MIN_SECRET_CHARS:
        _registered.add(value)


def configured_secrets(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Every secret value this process knows, longest first."""
    if environ is None:
        # WHY the environment's raw bytes when CPython has them: os.environ decodes
        # every name and value on each read, 25 us of every stored case and span.
        raw = getattr(os.environ, "_data", None)
        contents = tuple(raw.items()) if isinstance(raw, dict) else tuple(os.environ.items())
    else:
        contents = tuple(environ.items())
    return _secrets_in(contents, frozenset(_registered))


# WHY cached on the environment's contents: the store redacts every case it saves,
# and reading the secrets out of ~50 variables with two patterns each was 0.13 ms
# of every case; a changed variable or a new registered secret is a new key.
@functools.lru_cache(maxsize=8)
def _secrets_in(environ: tuple[tuple[str | bytes, str | bytes], ...], registered: frozenset[str]) -> tuple[str, ...]:
    found = set(registered)
    for name, value in (tuple(map(os.fsdecode, pair)) for pair in environ):
        if _SECRET_NAME.search(name):
            found.add(value)
        found.update(_URL_PASSWORD.findall(value))
    return tuple(sorted((v for v in found if len(v) >= MIN_SECRET_CHARS), key=len, reverse=True))


# --- layer 2: secret formats ------------------------------------------------------------

# detect-secrets' plugins by module and class; the generic ones (entropy,
# keywords, IP addresses) are left out: the patterns below do those better here.
_DETECTORS = (
    ("aws", "AWSKeyDetector"), ("artifactory", "ArtifactoryDetector"),
    ("azure_storage_key", "AzureStorageKeyDetector"), ("basic_auth", "BasicAuthDetector"),
    ("discord", "DiscordBotTokenDetector"), ("github_token", "GitHubTokenDetector"),
    ("gitlab_token", "GitLabTokenDetector"), ("mailchimp", "MailchimpDetector"), ("npm", "NpmDetector"),
    ("openai", "OpenAIDetector"), ("pypi_token", "PypiTokenDetector"), ("sendgrid", "SendGridDetector"),
    ("slack", "SlackDetector"), ("square_oauth", "SquareOAuthDetector"), ("stripe", "StripeDetector"),
    ("telegram_token", "TelegramBotTokenDetector"), ("twilio", "TwilioKeyDetector"),
)


@functools.cache
def _vendor_patterns() -> tuple[Any, ...]:  # re.Pattern, or RE2 where it compiles
    """The detectors' compiled patterns, imported once and lazily (detect-secrets imports requests)."""
    import importlib

    # WHY kept: detect-secrets' logger calls logging.captureWarnings(True) when imported, which
    # sends every warning to a logger nobody reads: the run's own warnings were lost
    show_warning = warnings.showwarning
    patterns: list[Any] = []
    for module, name in _DETECTORS:
        detector = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), name)
        patterns.extend(linear(pattern) for pattern in detector.denylist)
    warnings.showwarning = show_warning
    return tuple(patterns)


def linear(pattern: re.Pattern[str]) -> Any:
    """``pattern`` on RE2 (linear time) when RE2 can compile it.

    WHY: some detector rules scan to the end of the text from every place they
    could start (``sk-[A-Za-z0-9-_]*...``, ``//.+/:_authToken``): 200 KB of tool
    result took seconds per rule. Those RE2 refuses use look-arounds on
    bounded repetitions (``{20,50}(?!\\w)``), linear already."""
    import re2  # WHY here: only the patterns loaded lazily need it

    if pattern.flags & (re.VERBOSE | re.ASCII | re.LOCALE):
        return pattern
    inline = "".join(letter for flag, letter in ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"))
                     if pattern.flags & flag)
    options = re2.Options()
    options.log_errors = False  # WHY: a refused rule is expected, not an error on stderr
    try:
        return re2.compile(f"(?{inline}){pattern.pattern}" if inline else pattern.pattern, options)
    except re2.error:
        return pattern


def _vendor(text: str) -> str:
    screen, places = _vendor_screen()
    # WHY a screen: a short text took 20 RE2 calls of ~6 us each through the binding, most
    # of the cost of storing a case. One RE2 set of the very same patterns says which of
    # them can match; the others are skipped as long as the text is the one screened.
    could = set(screen.Match(text) or ()) if screen is not None else None
    original = text
    for place, pattern in enumerate(_vendor_patterns()):
        if could is not None and place in places and places[place] not in could and text == original:
            continue
        text = pattern.sub(_mask_secret_groups, text)
    return text


@functools.cache
def _vendor_screen() -> tuple[Any, dict[int, int]]:
    """One RE2 set of the vendor patterns RE2 compiled (their own text and options), and each
    one's place in ``_vendor_patterns`` -> its index in the set; (None, {}) when the set
    refuses one of them: every pattern then runs."""
    import re2

    options = re2.Options()
    options.log_errors = False
    screen, places = re2.Set.SearchSet(options), {}
    try:
        for place, pattern in enumerate(_vendor_patterns()):
            if not isinstance(pattern, re.Pattern):
                places[place] = screen.Add(pattern.pattern)
        screen.Compile()
    except re2.error:
        return None, {}
    return screen, places


def _mask_secret_groups(match: re.Match[str]) -> str:
    """The match with its secret replaced. A rule whose first group follows some
    context and ends the token (``://user:(password)@``, ``aws_key = '(...)'``)
    captured the secret itself; a group at the start (``(ghp|gho)_...``) or in
    the middle of a token is only part of the format, so the whole match goes."""
    whole, start = match.group(), match.start()
    if match.re.groups and match.group(1) and match.start(1) > start:
        begin, end = match.start(1) - start, match.end(1) - start
        if not re.match(r"[A-Za-z0-9_-]", whole[end:end + 1]):
            return whole[:begin] + KEY + whole[end:]
    lead = len(whole) - len(whole.lstrip(" \t\r\n=:\"'"))
    return whole[:lead] + KEY


# A private key block from its BEGIN line to the first END line after it, or, cut
# off, as far as base64 and header characters go. WHY not one pattern
# (BEGIN[\s\S]*?END): from every BEGIN without an END it scanned to the end of the
# text, 17 s for 224 KB of headers; the END lines are found once (``_private_keys``).
# WHY bounded names: "BEGIN" and a long run of capitals was quadratic too.
_KEY_BEGIN = re.compile(r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY[A-Z ]{0,40}-----")
_KEY_END = re.compile(r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY[A-Z ]{0,40}-----")
_KEY_CUT = re.compile(r"[A-Za-z0-9+/=\s:,.-]*")


def _private_keys(text: str) -> str:
    if "PRIVATE KEY" not in text:
        return text
    ends = [(m.start(), m.end()) for m in _KEY_END.finditer(text)]
    starts = [start for start, _ in ends]
    pieces, position = [], 0
    while (begin := _KEY_BEGIN.search(text, position)) is not None:
        after = bisect.bisect_left(starts, begin.end())
        stop = ends[after][1] if after < len(ends) else _KEY_CUT.match(text, begin.end()).end()  # type: ignore[union-attr]
        pieces += [text[position:begin.start()], "[REDACTED_PRIVATE_KEY]"]
        position = stop
    return "".join(pieces) + text[position:]

_FORMATS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?i)(\bauthorization[\"']?\s*[:=]\s*[\"']?(?:(?:basic|bearer|token|digest|negotiate)\s+)?)"
                r"[^\s\"',;]+"), r"\1" + TOKEN),
    (re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}"), "Bearer " + TOKEN),
    (re.compile(r"\bBasic\s+(?=[A-Za-z0-9+/]*[0-9+/=])[A-Za-z0-9+/]{8,}={0,2}"), "Basic " + TOKEN),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"), TOKEN),
    (re.compile(r"\b(?:hf_|api_org_)[A-Za-z0-9]{20,}\b"), KEY),  # model hub tokens
    (re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"), KEY),  # Google API keys
    (re.compile(r"\bya29\.[0-9A-Za-z_-]{20,}"), TOKEN),  # Google OAuth access tokens
    (re.compile(r"\b(?:gh[pousr]_|github_pat_)[A-Za-z0-9_]{20,}"), KEY),
    (re.compile(r"\bgl(?:pat|dt|rt|ptt|oas|cbt|imt|ft|soat)-[A-Za-z0-9_-]{20,}"), KEY),
    # WHY a digit is required: "key-performance-indicators" is prose, not a key.
    # WHY the look-ahead bounded: unbounded, it scanned to the end from every "sk-" (quadratic).
    (re.compile(r"\b(?:sk|pk|rk|key|api|tok)[-_](?=[A-Za-z0-9_-]{0,256}\d)[A-Za-z0-9_-]{12,}\b"), KEY),
    (re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), KEY),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"), KEY),
    (re.compile(r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"), KEY),
    (re.compile(r"(?i)\b((?:[a-z0-9]+[_-])?(?:api[_-]?key|(?:client[_-]?)?secret|password|passwd|pwd|"
                r"(?:access[_-]?|auth[_-]?|refresh[_-]?)?token|secret[_-]?access[_-]?key))"
                r"([\"']?\s*[:=]\s*[\"']?)[^\s\"',;&]+"), r"\1\2" + KEY),
]

# A part that every match of a pattern above holds, taken from the pattern itself (with its
# flags); the last one is the tail of the ``key=value`` pattern (every keyword ends in one of
# these words). WHY: a text holding none of them matches no pattern, so ``_formats`` leaves
# it as it is without the fourteen searches (~50 us for a short text, case after case).
_FORMATS_PARTS = (
    r"(?i:authorization)", r"(?i:bearer)", r"Basic", r"eyJ", r"hf_|api_org_", r"AIza", r"ya29\.",
    r"gh[pousr]_|github_pat_", r"gl(?:pat|dt|rt|ptt|oas|cbt|imt|ft|soat)-", r"(?:sk|pk|rk|key|api|tok)[-_]",
    r"npm_", r"xox[abposr]-", r"A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA",
    r"(?i:(?:key|secret|password|passwd|pwd|token)[\"']?\s*[:=])",
)
_FORMATS_SCREEN = re.compile("|".join(_FORMATS_PARTS))

# --- layer 3: personal data -------------------------------------------------------------

_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b")
_CARD = re.compile(r"(?<![\w-])\d(?:[ -]?\d){12,18}(?![\w-])")
# US social security numbers; the ranges the SSA never issues are left alone.
_SSN = re.compile(r"(?<![\w-])(?!000|666|9\d\d)\d{3}([- ])(?!00)\d{2}\1(?!0000)\d{4}(?![\w-])")
# WHY the look-behind: a match can only start where a run of these characters starts;
# without it, "a.a.a..." with no "@" was scanned to its end from every character.
_EMAIL = re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w.]*\d)")
_IPV6 = re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})?(?![\w:])")
_PHONE = re.compile(r"(?<![\w-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)|\d{2,4})[ .-]?\d{3,4}[ .-]?\d{3,4}(?![\w-])")
# Phone forms the pattern above misses: international numbers in small groups
# ("+33 6 12 34 56 78") and national numbers with a trunk 0 ("07700 900123").
# WHY a digit count: "+1 2" or "0 12" in prose are not phone numbers.
_PHONE_GROUPS = re.compile(r"(?<![\w-])(?:\+\d{1,3}(?:[ .-]?\d{1,5}){2,6}|0\d{3,4}[ .-]\d{5,7})(?![\w-])")


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _iban(match: re.Match[str]) -> str:
    compact = match.group().replace(" ", "")
    rearranged = compact[4:] + compact[:4]
    number = "".join(str(int(char, 36)) for char in rearranged)
    # WHY the mod-97 check: "AB12 CDEF GHIJ" in a product code is not an account number.
    return "[REDACTED_IBAN]" if 15 <= len(compact) <= 34 and int(number) % 97 == 1 else match.group()


def _luhn_ok(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char) * (2 if position % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def _card(match: re.Match[str]) -> str:
    # WHY Luhn: a 13-digit millisecond timestamp is not a card number.
    return "[REDACTED_CARD]" if _luhn_ok(_digits(match.group())) else match.group()


def _ipv4(match: re.Match[str]) -> str:
    # WHY every octet checked: "version 2026.10.1.5" is not an address.
    return "[REDACTED_IP]" if all(int(part) <= 255 for part in match.group().split(".")) else match.group()


def _ipv6(match: re.Match[str]) -> str:
    text = match.group()
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return text  # "10:30:00" is a time, "00:1A:2B:3C:4D:5E" a MAC address
    # WHY two groups at least: "x[::1]" slices a list in code.
    return "[REDACTED_IP]" if len(re.findall(r"[0-9A-Fa-f]+", text)) >= 2 else text


def _phone(match: re.Match[str]) -> str:
    return "[REDACTED_PHONE]" if 9 <= len(_digits(match.group())) <= 15 else match.group()


_PERSONAL: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (_IBAN, _iban), (_CARD, _card), (_SSN, "[REDACTED_SSN]"), (_EMAIL, "[REDACTED_EMAIL]"),
    (_IPV4, _ipv4), (_IPV6, _ipv6), (_PHONE, "[REDACTED_PHONE]"), (_PHONE_GROUPS, _phone),
]


# The same for ``_PERSONAL``, in its order: each pattern without its look-arounds and word
# boundaries, or a part every match holds (an IBAN's first two groups, a card's first 13 digits,
# the SSN's separator as a class, not a back-reference; an e-mail's "@" between two of its
# characters; two colons of an IPv6 address). WHY every part is of bounded width: this screen
# runs on Python's engine, where an unbounded part ("[...]+@") tried from every place of a text
# without "@" is quadratic (400 KB of "sk-" took ten minutes).
_PERSONAL_PARTS = (
    r"[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2}", r"\d(?:[ -]?\d){12}", r"\d{3}[- ]\d{2}[- ]\d{4}",
    r"[A-Za-z0-9._%+-]@[A-Za-z0-9.-]", r"(?:\d{1,3}\.){3}\d{1,3}", r":[0-9A-Fa-f]{0,4}:",
    r"(?:\(\d{2,4}\)|\d{2,4})[ .-]?\d{3,4}[ .-]?\d{3,4}", r"\+\d{1,3}(?:[ .-]?\d{1,5}){2,6}|0\d{3,4}[ .-]\d{5,7}",
)
_PERSONAL_SCREEN = re.compile("|".join(_PERSONAL_PARTS))


@functools.lru_cache(maxsize=2)
def _ascii_screen(personal: bool) -> Any:  # an re2.Set, or None when it cannot be built
    """Every screen above and the vendor patterns RE2 runs, in one RE2 set, for ASCII text.

    WHY ASCII only: on ASCII text RE2 and Python read these parts alike once ``\\d`` and ``\\s``
    are spelt as Python's classes are on ASCII (Python's ``\\s`` takes \\x1c-\\x1f too); on other
    text Python's Unicode classes and case folding differ, and the screens above decide."""
    import re2

    options = re2.Options()
    options.log_errors = False
    screen = re2.Set.SearchSet(options)
    parts = (*_FORMATS_PARTS, *(_PERSONAL_PARTS if personal else ()))
    try:
        for part in parts:
            screen.Add(part.replace(r"\d", "[0-9]").replace(r"\s", r"[\t-\r\x1c-\x20]"))
        for pattern in _vendor_patterns():
            if not isinstance(pattern, re.Pattern):
                screen.Add(pattern.pattern)
        screen.Compile()
    except re2.error:
        return None
    return screen


def _nothing_to_redact(text: str, personal: bool) -> bool:
    """Whether no secret format (and, if ``personal``, no personal data) can match ASCII ``text``:
    one RE2 search for nearly all the patterns; those on Python's engine search it themselves."""
    screen = _ascii_screen(personal)
    if screen is None or "PRIVATE KEY" in text or screen.Match(text):
        return False
    return all(pattern.search(text) is None for pattern in _vendor_patterns() if isinstance(pattern, re.Pattern))


def redact_secrets(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every configured secret and every known secret format replaced;
    personal data is left as it is."""
    return _formats(_known(text, _all_secrets(secrets)))


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with secrets (configured ones, ``secrets``, and known formats) and
    personal data (IBAN, card, SSN, e-mail, IP address, phone) replaced by a marker."""
    return _personal(redact_secrets(text, secrets))


def redact_data(data: Any, keep: frozenset[str] = frozenset(), personal: bool = True) -> Any:
    """A copy of JSON-like ``data`` with every string redacted, keys too, at any
    depth, except the values of the top-level keys in ``keep`` (a result's own
    ids and statuses: structure, not content). With ``personal=False`` only
    secrets go; personal data stays (raw data, opted in). Whatever is not JSON
    (NaN, bytes, an object, a container inside itself) comes out as JSON
    (``core.storable``): what is redacted can always be written.

    WHY ``keep`` only at the top: a ``name`` or ``model`` inside tool arguments
    or state is the agent's content; kept anywhere, a secret placed there was
    stored in clear."""
    return redact_data_checked(data, keep, personal)[0]


def redact_data_checked(data: Any, keep: frozenset[str] = frozenset(), personal: bool = True) -> tuple[Any, bool]:
    """``redact_data``, and whether it changed nothing: every text, key and value came
    out as it went in, so the copy writes the very JSON ``data`` writes."""
    clean = _Cleaner(personal)
    if type(data) is dict and keep:
        copy = {_walk(k, clean, 0) if type(k) is str else _key(k, clean): v if k in keep else _walk(v, clean, 1)
                for k, v in data.items()}
        return copy, not clean.changed
    return _walk(data, clean, 0), not clean.changed


def redacted_json(data: Any, keep: frozenset[str] = frozenset(), personal: bool = True) -> tuple[str, bool]:
    """The compact JSON text (keys sorted) of ``redact_data(data, keep, personal)``, and whether
    redaction changed nothing.

    WHY a way round the walk: storing a case walked its ~90 values in Python, most of its
    cost, though nearly every case holds no secret at all. When ``data`` is plain JSON (its
    encoding says so) and every text in it is one redaction leaves as it is (most are known
    already: one set difference), its own JSON is the redacted JSON."""
    clean = _Cleaner(personal)
    text = _as_is(data, clean)
    if text is not None:
        return text, True
    copy, same = redact_data_checked(data, keep, personal)
    return jsontext.dump(copy, sort_keys=True), same


def _as_is(data: Any, clean: _Cleaner) -> str | None:
    """``data``'s JSON text if redaction leaves every text, key and value of it as it is
    (kept ones too: when one of those would change, the walk decides), else None."""
    # Plain JSON is what reads back as itself: orjson refuses a key that is not text, an integer
    # past 64 bits, a lone surrogate and (passed through) a subclass of str, int, dict...; what it
    # writes as something else (NaN and Infinity as null, an enum as its value, a UUID as text; a
    # tuple as a list, left to the walk too) does not read back equal.
    try:
        raw = orjson.dumps(data, option=orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_SUBCLASS
                           | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME)
    except TypeError:
        return None
    if raw.count(b"[") + raw.count(b"{") >= WALK_DEPTH or orjson.loads(raw) != data:  # WHY the count: nesting past what the walk keeps
        return None
    literals = raw.split(b'"')[1::2] if b'\\"' not in raw else _JSON_STRING.findall(raw)
    known = _same_literals(clean.known, clean.personal)
    for literal in set(literals) - known:
        text = json.loads(b'"' + literal + b'"') if b"\\" in literal else literal.decode()
        if not (len(text) < 6 and text.isascii()) and clean(text) != text:
            return None
        if len(known) < SHORT_TEXTS:
            known.add(literal)
    return raw.decode()


_JSON_STRING = re.compile(rb'"((?:[^"\\]|\\.)*)"')


@functools.lru_cache(maxsize=8)
def _same_literals(known: tuple[str, ...], personal: bool) -> set[bytes]:
    """The JSON string literals (as encoded, quotes off) that redaction with these secrets leaves as they are."""
    return set()


class _Cleaner:
    """One text redacted with the secrets known when it was made; ``changed`` once any was not
    left as it was (or a value had to become JSON, ``_walk``)."""

    __slots__ = ("changed", "known", "personal", "short")

    def __init__(self, personal: bool) -> None:
        self.known = _all_secrets(())  # once for the whole tree, not once per string
        self.short = _short_texts(self.known, personal)
        self.personal = personal
        self.changed = False

    def __call__(self, text: str) -> str:
        if len(text) <= CACHED_CHARS:
            if (done := self.short.get(text)) is None:
                done = _clean(text, self.known, self.personal)
                if len(self.short) < SHORT_TEXTS:
                    self.short[text] = done
        elif len(text) <= LONG_CACHED_CHARS:
            done = _clean_long_cached(text, self.known, self.personal)
        else:
            done = _clean(text, self.known, self.personal)
        if done != text:
            self.changed = True
        return done


# WHY a cache of short texts: a run stores the same tool results, arguments,
# check details and canned answers case after case, and each text costs about
# 55 pattern passes (~25 us); the secrets known are part of the key.
CACHED_CHARS = 512


# WHY a plain dict per set of secrets for redact_data: every key and short value
# of every stored case goes through it (~60 a case); an lru_cache call hashes the
# secrets tuple each time, which doubled the cost of storing a case once keys
# were redacted too. Bounded: past SHORT_TEXTS texts (8 MB at most) new ones are
# redacted each time, not remembered.
SHORT_TEXTS = 16_384


@functools.lru_cache(maxsize=8)
def _short_texts(known: tuple[str, ...], personal: bool) -> dict[str, str]:
    return {}


# WHY long texts too, in a small cache of their own: the context an agent saw (its
# retrieved documents) repeats across cases and costs most of a stored case's
# redaction; 256 texts of up to 16,000 characters bound it to ~8 MB.
LONG_CACHED_CHARS = 16_000


@functools.lru_cache(maxsize=256)
def _clean_long_cached(text: str, known: tuple[str, ...], personal: bool) -> str:
    return _clean(text, known, personal)


def _clean(text: str, known: tuple[str, ...], personal: bool) -> str:
    text = _known(clean_text(text), known)
    if text.isascii() and _nothing_to_redact(text, personal):  # WHY: most texts, at a fraction of the passes
        return text
    text = _formats(text)
    return _personal(text) if personal else text


def _all_secrets(extra: Iterable[str]) -> tuple[str, ...]:
    extra = tuple(s for s in extra if s)
    return _longest_first(configured_secrets(), extra)


@functools.lru_cache(maxsize=8)  # WHY: every stored case asks, and the secrets rarely change
def _longest_first(configured: tuple[str, ...], extra: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted({*configured, *extra}, key=len, reverse=True))


def _known(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:  # longest first: a secret containing another goes whole
        if secret in text:
            text = text.replace(secret, KEY)
    return text


def _formats(text: str) -> str:
    text = _vendor(_private_keys(text))
    if _FORMATS_SCREEN.search(text) is None:  # no pattern below can match: each would leave it as it is
        return text
    for pattern, marker in _FORMATS:
        text = pattern.sub(marker, text)
    return text


def _personal(text: str) -> str:
    if _PERSONAL_SCREEN.search(text) is None:  # no pattern below can match (see _PERSONAL_SCREEN)
        return text
    for pattern, marker in _PERSONAL:
        text = pattern.sub(_numbered(marker), text)
    return text


def _numbered(marker: str | Callable[[re.Match[str]], str]) -> Callable[[re.Match[str]], str]:
    """The marker for one text, numbered per distinct value: the first e-mail is
    ``[REDACTED_EMAIL]``, another one ``[REDACTED_EMAIL#2]``, the first again
    ``[REDACTED_EMAIL]``. WHY: a failure that reads "expected [REDACTED_EMAIL],
    got [REDACTED_EMAIL#2]" says the two differ without showing either."""
    seen: dict[tuple[str, str], int] = {}

    def replace(match: re.Match[str]) -> str:
        found = marker(match) if callable(marker) else marker
        if found == match.group() or not found.endswith("]"):
            return found  # not personal data after all (a checksum failed), or no marker
        number = seen.setdefault((found, match.group()), 1 + sum(1 for kind, _ in seen if kind == found))
        return found if number == 1 else f"{found[:-1]}#{number}]"

    return replace


# Containers deeper than this are not walked: a stored value is at most
# core.storable.MAX_DEPTH deep inside a result, so only a value that skipped it gets here.
WALK_DEPTH = 100


def _walk(data: Any, clean: _Cleaner, depth: int) -> Any:
    kind = type(data)
    if kind is str:
        # nothing secret or personal fits in 5 ASCII characters (a lone surrogate does)
        return data if len(data) < 6 and data.isascii() else clean(data)
    if kind is dict or kind is list or kind is tuple:
        if depth >= WALK_DEPTH:
            clean.changed = True
            return f"[nested deeper than {WALK_DEPTH} levels]"
        if kind is dict:
            return {_walk(k, clean, depth) if type(k) is str else _key(k, clean): _walk(v, clean, depth + 1)
                    for k, v in data.items()}
        return [_walk(v, clean, depth + 1) for v in data]
    if data is None or kind is bool or (kind is int and INT64[0] <= data <= INT64[1]) or \
            (kind is float and math.isfinite(data)):
        return data
    clean.changed = True  # not JSON as it was: what is written is its storable form
    return _walk(storable(data)[0], clean, depth)


def _key(key: Any, clean: _Cleaner) -> str:
    """A key that is not text (1, None, a tuple) as the text storable gives it, redacted."""
    clean.changed = True  # WHY: a key that is not text is written as another JSON than it was
    text = storable_key(key)
    return text if len(text) < 6 and text.isascii() else clean(text)
