"""What counts as a secret: pikit's own high-precision rules, detect-secrets' detectors, entropy.

pikit's rules (:data:`RULES`) cover the kinds detect-secrets 1.5 misses or matches only in
part (it finds ``ghp`` of a GitHub token, the first line of a private key, the first two parts
of a JWT; it has no rule for ``github_pat_``, ``sk-proj-``, ``sk-ant-``, Google's ``AIza`` keys,
AWS secret keys, bearer or basic-auth headers, ``npm_`` tokens or ``.env`` assignments).
detect-secrets adds the kinds pikit has no rule of its own for (Artifactory, Azure, Discord,
IBM, Mailchimp, PyPI, Square, Telegram, …) through the regular expressions of its detectors,
and its Shannon entropy measure decides which long base64-like words are secrets.
detect-secrets is imported only when a :class:`~pikit.Redactor` is built.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..errors import PikitError

__all__ = ["ENTROPY_LIMIT", "KEYWORD", "KEYWORDED", "KEYWORDS", "NEEDLES", "RULES", "WINDOW", "Finder",
           "high_entropy", "library_rules", "plausible"]

#: (kind, regular expression): the secret is the group named ``s`` when the rule has one, else the match.
_B = r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))"  # a word starts: after no letter or digit (``x_ghp_…``), or after ``\n``

RULES: tuple[tuple[str, str], ...] = tuple((kind, expression.replace("{B}", _B)) for kind, expression in (
    ("private-key", r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
                    r"(?s:.*?)(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)"),
    ("url-password", r"{B}[a-zA-Z][a-zA-Z0-9+.-]{1,30}://[^\s:/?#@\[\]\"'<>]{1,256}:(?P<s>[^\s:/?#@\[\]\"'<>]{1,256})@"),
    ("basic-auth", r"(?i){B}basic\s+(?P<s>(?=[A-Za-z0-9+/]*[0-9+/=])[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"),
    ("bearer-token", r"(?i){B}bearer\s+(?P<s>[A-Za-z0-9\-._~+/]{16,}=*)"),
    ("jwt", r"{B}eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("github-token", r"{B}(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})"),
    ("gitlab-token", r"{B}gl(?:pat|dt|ptt|rt|cbt|soat|ffct)-[A-Za-z0-9_-]{20,}"),
    ("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_+-]{20,}"),
    ("slack-token", r"{B}xox[abposre]-(?:[0-9A-Za-z]{1,40}-){1,4}[0-9A-Za-z]{6,}"),
    ("stripe-key", r"{B}(?:sk|rk|pk|whsec)_(?:live|test)_[0-9A-Za-z]{16,}"),
    ("anthropic-key", r"{B}sk-ant-(?:api|admin|oat)\d{2}-[A-Za-z0-9_-]{20,}"),
    ("openai-key", r"{B}sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|{B}sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}"
                   r"|{B}sk-[A-Za-z0-9]{32,64}\b"),
    ("google-api-key", r"{B}AIza[0-9A-Za-z_-]{35}"),
    ("aws-access-key-id", r"{B}(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b"),
    ("aws-secret-key", r"(?i)aws.{0,20}?(?:secret|private)?.{0,10}?key.{0,6}?[\"']?\s*[:=]\s*[\"']?"
                       r"(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"),
    ("npm-token", r"{B}npm_[A-Za-z0-9]{36}\b|_authToken\s*=\s*(?P<s>[^\s\"']{8,})"),
    ("twilio-key", r"{B}(?:SK|AC)[0-9a-fA-F]{32}\b"),
    ("sendgrid-key", r"{B}SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}"),
    ("password", r"(?i){B}(?:[A-Za-z0-9_]*?_)?(?:password|passwd|passphrase|secret|"
                 r"secret_?key|client_?secret|api_?key|access_?key|auth_?token|access_?token|token|credentials?)"
                 r"(?:\\?[\"'])?(?:[ \t]*:(?!//)[ \t]*|=|[ \t]+=[ \t]+(?=\\?[\"']))"
                 r"(?:(?P<q>\\?[\"'])(?P<s>[^\s\"'\\]{6,})(?P=q)|(?P<u>[^\s\"',;`()\[\]{}<>\\]{6,}))"),
))

# An unquoted value that is code, not a secret: a type, a keyword, a name path, a variable.
_CODE_VALUE = re.compile(r"(?:string|number|boolean|undefined|null|none|true|false|optional|required|"
                         r"object|str|int|bytes)\b.*|[$%{&*].*|.*\.\.\.|(?:[A-Za-z_][\w$]*\.)+[\w$]+|\[REDACTED:.*",
                         re.IGNORECASE)


_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
_CLOSES = re.compile(r"[ \t]*[,}()]")  # the end of an argument or a member, or a call


def plausible(kind: str, match: re.Match[str]) -> bool:
    """Whether a match of pikit's rule ``kind`` is a secret (an unquoted assignment may be code)."""
    if kind == "password" and match.group("u") is not None:
        value = match.group("u")
        if _IDENTIFIER.fullmatch(value) and _CLOSES.match(match.string, match.end()):
            return False  # a variable in code: ``{ ...options, token: sessionToken }``
        return not _CODE_VALUE.fullmatch(value)
    return True


#: Words a text must hold for a rule to be tried (kind → words, whether they are matched in any case):
#: ``in`` is far cheaper than a regular expression, and most texts hold none of them.
NEEDLES: dict[str, tuple[tuple[str, ...], bool]] = {
    "private-key": (("PRIVATE KEY",), False),
    "url-password": (("://",), False),
    "basic-auth": (("basic",), True),
    "bearer-token": (("bearer",), True),
    "jwt": (("eyJ",), False),
    "github-token": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), False),
    "gitlab-token": (("glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "glsoat-", "glffct-"), False),
    "slack-webhook": (("hooks.slack.com",), False),
    "slack-token": (("xox",), False),
    "stripe-key": (("_live_", "_test_"), False),
    "anthropic-key": (("sk-ant-",), False),
    "openai-key": (("sk-",), False),
    "google-api-key": (("AIza",), False),
    "aws-access-key-id": (("AKIA", "ASIA", "ABIA", "ACCA", "A3T"), False),
    "aws-secret-key": (("aws",), True),
    "npm-token": (("npm_", "_authToken"), False),
    "twilio-key": (("SK", "AC"), False),
    "sendgrid-key": (("SG.",), False),
    "password": (("pass", "secret", "key", "token", "credential"), True),
    "email": (("@",), False),
    # detect-secrets' detectors
    "artifactory": (("AKC", "AP"), False),
    "azure-storage-key": (("AccountKey=",), False),
    "cloudant": (("key", "pw", "pass", "token", "cloudant"), True),
    "discord-bot-token": ((".",), False),
    "ibm-cloud-iam": (("key", "pwd", "pass", "token"), True),
    "ibm-cos-hmac": (("secret",), True),
    "mailchimp": (("-us",), False),
    "pypi-token": (("pypi-",), False),
    "softlayer": (("key", "pwd", "pass", "token", "softlayer"), True),
    "square-o-auth": (("sq0csp-",), False),
    "telegram-bot-token": ((":",), False),
}

#: The kinds whose expressions start from a keyword (``password``, ``api_key``, ``SECRET``): they are
#: tried only in a window around each keyword :data:`KEYWORD` finds, not over the whole text.
KEYWORDED = frozenset({"password", "aws-secret-key", "cloudant", "ibm-cloud-iam", "ibm-cos-hmac", "softlayer"})
KEYWORDS = ("key", "pw", "pass", "token", "secret", "credential")
KEYWORD = re.compile("|".join(KEYWORDS), re.IGNORECASE)
#: How far before and after a keyword its window reaches (a variable's name; a value).
WINDOW = (100, 600)

EMAIL = ("email", r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}\b")

#: detect-secrets' limit for base64 strings (``Base64HighEntropyString``); pikit's default.
ENTROPY_LIMIT = 4.5
#: A word of detect-secrets' base64 alphabet (standard and url-safe: ``+/-_``, ``=`` padding),
#: greedy and leftmost: always a whole word, slashes included (a key holding ``/`` is one word).
_CANDIDATE = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")
_SHORTEST_WORD = 24  # a part of a word between slashes, looked at alone when the whole word is no key
_LONGEST = 512  # a longer word is data (a blob of base64), not a key
#: An AWS secret access key's shape (40 characters of standard base64), and the entropy from which
#: a word of that shape alone is one: 40 random characters have 4.48 bits or more 99 times in 100.
_AWS_SECRET = re.compile(r"[A-Za-z0-9/+]{40}")
_AWS_SECRET_LIMIT = 4.2
_DATED = re.compile(r".*(?:\d{4}-\d\d-\d\d|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}).*", re.IGNORECASE)
_HEX = re.compile(r"[0-9a-fA-F-]+")
#: A part of a path between two slashes: a lower-case word (``var``, ``folders``) or capitalised words
#: (``TemporaryItems``); a key's parts are random, and two parts like these are rare in one.
_PATH_PART = re.compile(r"[a-z]{3,}|[A-Z][a-z]{2,}(?:[A-Z][a-z]+)*")
# Ids providers give tool calls, messages and responses: random, and no secrets.
_ID_PREFIXES = ("toolu_", "call_", "msg_", "chatcmpl-", "resp_", "fc_", "rs_", "req_", "srvtoolu_")

# detect-secrets' detectors whose expressions pikit's rules already cover (or that are no secrets).
_COVERED = frozenset({
    "AWSKeyDetector", "BasicAuthDetector", "GitHubTokenDetector", "GitLabTokenDetector", "JwtTokenDetector",
    "NpmDetector", "OpenAIDetector", "PrivateKeyDetector", "SendGridDetector", "SlackDetector", "StripeDetector",
    "TwilioKeyDetector", "IPPublicDetector",
})


def _library() -> Any:
    try:
        from detect_secrets.core.plugins import util
        from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
    except ImportError:
        raise PikitError("redaction needs detect-secrets: pip install 'pikit[redact]'") from None
    return util, Base64HighEntropyString


def library_rules() -> list[tuple[str, re.Pattern[str]]]:
    """(kind, expression) of every detect-secrets detector pikit's own rules do not cover."""
    util, _ = _library()
    found: list[tuple[str, re.Pattern[str]]] = []
    for plugin in sorted(util.get_mapping_from_secret_type_to_class().values(), key=lambda c: c.__name__):
        if plugin.__name__ in _COVERED or not hasattr(plugin, "denylist"):
            continue
        kind = re.sub(r"(?<!^)(?=[A-Z])", "-", plugin.__name__.removesuffix("Detector")).lower()
        found += [(kind, expression) for expression in plugin.denylist]
    return found


class Finder:
    """Shannon entropy as detect-secrets measures it, tuned not to take hashes, ids or paths."""

    def __init__(self, limit: float = ENTROPY_LIMIT) -> None:
        _, plugin = _library()
        self._entropy = plugin(limit=limit).calculate_shannon_entropy
        self.limit = limit

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        """Where ``text`` holds a long word of base64 characters random enough to be a key.

        A word holding ``/`` is a key when the whole of it is and at most one part between its
        slashes is a word (``var``, ``folders``, ``TemporaryItems``: a path); else each part is
        looked at alone, so a key in a path (``/keys/<key>/``) is still found.
        """
        for match in _CANDIDATE.finditer(text):
            word = match.group()
            if len(word) > _LONGEST:
                continue
            if self._is_key(word):
                yield match.span()
                continue
            if "/" not in word:
                continue
            at = match.start()
            for part in word.split("/"):
                if len(part) >= _SHORTEST_WORD and self._is_key(part):
                    yield at, at + len(part)
                at += len(part) + 1

    def _is_key(self, word: str) -> bool:
        if "/" in word and sum(1 for part in word.split("/") if _PATH_PART.fullmatch(part)) >= 2:
            return False  # a path
        if high_entropy(word, self._entropy, self.limit):
            return True
        return bool(_AWS_SECRET.fullmatch(word)) and high_entropy(word, self._entropy, min(self.limit,
                                                                                          _AWS_SECRET_LIMIT))


def high_entropy(word: str, entropy: Any, limit: float) -> bool:
    """Whether ``word`` looks like a key: mixed case and digits, not hex (hashes, uuids), not an id, a slug or a
    path (separators ``-_/`` more than one character in eight), random enough (``limit``: bits per character)."""
    if _HEX.fullmatch(word) or word.isalpha() or word.startswith(_ID_PREFIXES):
        return False
    if not (any(c.isdigit() for c in word) and any(c.islower() for c in word) and any(c.isupper() for c in word)):
        return False
    if word.count("-") + word.count("_") + word.count("/") > len(word) / 8 or _DATED.fullmatch(word):
        return False  # a slug, a path, a model name, a file name with a date or a uuid
    return bool(entropy(word) >= limit)
