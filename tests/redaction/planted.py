"""A session with planted secrets of many kinds in every field that can hold text."""

from __future__ import annotations

import base64
import html
import json
import random
import urllib.parse
from pathlib import Path
from typing import Any

from pikit.llm._secrets import key_forms

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_rng = random.Random(20260101)


def _r(n: int, alphabet: str = _ALNUM) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


ENV_TOKEN = _r(30)
"""The value of ``MY_SERVICE_TOKEN`` in the environment of the runs (it has no shape of its own)."""
USER_PATTERN_VALUE = "ACME-" + _r(12, "0123456789")
"""A value only ``--redact-pattern 'ACME-[0-9]{12}'`` finds."""
ALLOWED = "ghp_" + _r(36)
"""A token shaped like a secret that the tests put on the allow-list."""
EMAIL = "jane.doe." + _r(6, "abcdefghij") + "@example.org"

_PEM_BODY = "\n".join(_r(64, _ALNUM + "+/") for _ in range(4))
PRIVATE_KEY = "-----BEGIN RSA PRIVATE KEY-----\n" + _PEM_BODY + "\n-----END RSA PRIVATE KEY-----"
_JWT = ("eyJ" + base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT","kid":"' + _r(12).encode() + b'"}').decode()
        .rstrip("=")[3:] + "." + "eyJ" + base64.urlsafe_b64encode(b'{"sub":"' + _r(16).encode() + b'"}').decode()
        .rstrip("=")[3:] + "." + _r(43, _ALNUM + "-_"))
_BASIC_PASSWORD = _r(14)

#: kind → (the secret's value, the text around it as it appears in the session)
SECRETS: dict[str, tuple[str, str]] = {}


def _plant(kind: str, value: str, text: str | None = None) -> None:
    SECRETS[kind] = (value, text if text is not None else f"the {kind} is {value} here")


_plant("aws-access-key-id", "AKIA" + _r(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"))
_aws_secret = _r(40, _ALNUM + "/+")
_plant("aws-secret-key", _aws_secret, f"aws_secret_access_key = {_aws_secret}")
_plant("github-token", "ghp_" + _r(36))
_plant("github-oauth", "gho_" + _r(36))
_plant("github-pat", "github_pat_11" + _r(20) + "_" + _r(59))
_plant("gitlab-token", "glpat-" + _r(20))
_plant("slack-token", "xoxb-" + _r(12, "0123456789") + "-" + _r(13, "0123456789") + "-" + _r(24))
_plant("slack-webhook", "https://hooks.slack.com/services/T" + _r(8) + "/B" + _r(8) + "/" + _r(24))
_plant("stripe-key", "sk_live_" + _r(24))
_plant("openai-key", "sk-proj-" + _r(48, _ALNUM + "-_"))
_plant("anthropic-key", "sk-ant-api03-" + _r(93, _ALNUM + "-_") + "AA")
_plant("google-api-key", "AIza" + _r(35, _ALNUM + "-_"))
_plant("jwt", _JWT)
_plant("private-key", _PEM_BODY.split("\n")[1], PRIVATE_KEY)
_url_password = _r(16)
_plant("url-password", _url_password, f"psql postgres://admin:{_url_password}@db.internal:5432/app")
_plant("basic-auth", base64.b64encode(f"deploy:{_BASIC_PASSWORD}".encode()).decode(),
       "Authorization: Basic " + base64.b64encode(f"deploy:{_BASIC_PASSWORD}".encode()).decode())
_bearer = _r(40, _ALNUM + "._-")
_plant("bearer-token", _bearer, f"curl -H 'Authorization: Bearer {_bearer}' https://api.example.com")
_plant("npm-token", "npm_" + _r(36))
_plant("twilio-key", "SK" + _r(32, "0123456789abcdef"))
_plant("sendgrid-key", "SG." + _r(22, _ALNUM + "-_") + "." + _r(43, _ALNUM + "-_"))
_env_password = _r(18)
_plant("password", _env_password, f"DB_PASSWORD={_env_password}")
_yaml_secret = _r(20)
_plant("secret", _yaml_secret, f"secret: {_yaml_secret}")
_plant("telegram-bot-token", _r(9, "0123456789") + ":" + _r(35, _ALNUM + "_-"))
_high = _r(40)
_plant("high-entropy", _high, f'const value = "{_high}";')


def _random_word(alphabet: str, length: int, holding: str) -> str:
    """A random word of ``alphabet`` holding each of ``holding``, of the shape the entropy rule takes."""
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

    entropy = Base64HighEntropyString(limit=4.5).calculate_shannon_entropy
    while True:
        word = _r(length, alphabet)
        if all(c in word for c in holding) and word.count("-") + word.count("_") + word.count("/") <= length / 8 \
                and any(c.isdigit() for c in word) and any(c.isupper() for c in word) and entropy(word) >= 4.5:
            return word


_base64 = _random_word(_ALNUM + "+/", 46, "+/") + "=="
_plant("base64-slash", _base64, f"the vault gave {_base64} back")
_url_safe = _random_word(_ALNUM + "-_", 43, "-_")
_plant("base64-url-safe", _url_safe, f"?sig={_url_safe}&x=1")
_bare_aws = _random_word(_ALNUM + "+/", 40, "/")
_plant("aws-secret-bare", _bare_aws, f"export {_bare_aws}")
_escaped = _random_word(_ALNUM + "+/", 44, "//")
_plant("json-escaped-slash", _escaped, '{"cred": "' + _escaped.replace("/", "\\/") + '"}')
_unicode_escaped = _random_word(_ALNUM + "+/", 44, "//")
_plant("json-escaped-u002f", _unicode_escaped, '{"cred": "' + _unicode_escaped.replace("/", "\\u002f") + '"}')
_percent = _random_word(_ALNUM + "+/", 44, "+/")
_plant("percent-escaped", _percent, "https://acct.blob.core.windows.net/c?sv=2024&sig="
       + urllib.parse.quote(_percent, safe="") + "&se=1")
_html = _random_word(_ALNUM + "+/", 44, "//")
_plant("html-escaped", _html, "<pre>" + _html.replace("/", "&#x2F;") + "</pre>")
FILE_TOKEN = "ghp_" + _r(36)
"""A token in the planted session's file name (and nowhere in its text)."""
_plant("env", ENV_TOKEN, f"the service answered for {ENV_TOKEN}")

BLOB = "\n".join(text for _, text in SECRETS.values()) + f"\nticket {USER_PATTERN_VALUE}, mail {EMAIL}"
"""Every planted secret, in one text."""
ESCAPED = json.dumps({"output": BLOB})
"""The same text as JSON, the way a tool prints it (``\\n`` and ``\\"`` escapes)."""
BLANK_IMAGE_DATA = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
IMAGE = base64.b64encode(b"\x89PNG fake image " + SECRETS["github-token"][0].encode()).decode()


def values() -> list[str]:
    """Every value that must not survive redaction (the allowed one is not among them)."""
    return [v for v, _ in SECRETS.values()] + [USER_PATTERN_VALUE, EMAIL, FILE_TOKEN, *_PEM_BODY.split("\n")]


def forms(value: str) -> set[str]:
    """The ways ``value`` can show up in output: raw, escaped (JSON, ``repr``, ``\\/``, HTML), base64."""
    found = set(key_forms(value))
    found |= {value.replace("/", escape) for escape in ("\\/", "\\u002f", "\\\\/", "\\\\u002f", "&#x2F;", "&#47;")}
    found |= {html.escape(value), json.dumps(value, ensure_ascii=True)[1:-1], urllib.parse.quote(value, safe="")}
    found |= {html.escape(form) for form in found}  # an escaped form shown on a page is escaped once more
    return {f for f in found if len(f) >= 8}


def survivors(output: bytes | str) -> list[str]:
    """The planted values (by kind) that ``output`` still holds in any form."""
    text = output.decode("utf-8", "surrogatepass") if isinstance(output, bytes) else output
    left = []
    for value in values():
        if any(form in text for form in forms(value)):
            kind = next((k for k, (v, _) in SECRETS.items() if v == value), "file-name" if value == FILE_TOKEN
                        else value[:6])
            left.append(kind)
    return left


T = "2026-01-01T00:00:{:02d}.000Z"


def _e(kind: str, entry_id: str, parent: str | None, second: int, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": T.format(second), **fields}


def _m(entry_id: str, parent: str | None, second: int, message: dict[str, Any]) -> dict[str, Any]:
    return _e("message", entry_id, parent, second, message={**message, "timestamp": 1767225600000 + second})


def entries() -> list[dict[str, Any]]:
    """The planted session's lines, header first: every field that can hold text holds every secret."""
    usage = {"input": 100, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 120,
             "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0, "total": 0.3}}
    secret_key = SECRETS["github-token"][0]
    return [
        {"type": "session", "version": 3, "id": "planted", "timestamp": T.format(0),
         "cwd": "/home/dev/" + SECRETS["stripe-key"][0], "parentSession": f"/tmp/{BLOB}.jsonl"},
        _e("session_info", "a0000001", None, 1, name=BLOB),
        _m("a0000002", "a0000001", 2, {"role": "user", "content": BLOB}),
        _m("a0000003", "a0000002", 3, {"role": "user", "content": [
            {"type": "text", "text": BLOB}, {"type": "image", "data": IMAGE, "mimeType": "image/png"}]}),
        _m("a0000004", "a0000003", 4, {
            "role": "assistant", "provider": "anthropic", "model": "claude-sonnet-4-5", "api": "anthropic-messages",
            "usage": usage, "stopReason": "toolUse", "content": [
                {"type": "thinking", "thinking": BLOB},
                {"type": "text", "text": BLOB},
                {"type": "toolCall", "id": "toolu_01", "name": "bash",
                 "arguments": {"command": BLOB, secret_key: "a key that is a secret", "nested": [[{"deep": BLOB}]]}},
            ]}),
        _m("a0000005", "a0000004", 5, {"role": "toolResult", "toolCallId": "toolu_01", "toolName": "bash",
                                       "content": [{"type": "text", "text": BLOB},
                                                   {"type": "image", "data": IMAGE, "mimeType": "image/png"}],
                                       "isError": False, "details": {"raw": ESCAPED, "env": BLOB}}),
        _m("a0000006", "a0000005", 6, {"role": "bashExecution", "command": BLOB, "output": ESCAPED, "exitCode": 0,
                                       "cancelled": False, "truncated": False}),
        _e("compaction", "a0000007", "a0000006", 7, summary=BLOB, firstKeptEntryId="a0000005", tokensBefore=5000,
           details={"readFiles": [f"/src/{BLOB}"], "modifiedFiles": [ESCAPED]}),
        _e("label", "a0000008", "a0000007", 8, targetId="a0000004", label=BLOB),
        _e("custom", "a0000009", "a0000008", 9, customType="ext", data={"note": BLOB, "list": [ESCAPED]}),
        _e("custom_message", "a000000a", "a0000009", 10, customType="ext", content=BLOB, display=True,
           details={"x": BLOB}),
        _e("context_edit", "a000000b", "a000000a", 11, targetId="a0000005", replacement={"content": BLOB}),
        _m("a000000c", "a000000b", 12, {"role": "user", "content": "and the allowed one: " + ALLOWED}),
        _e("branch_summary", "a000000d", "a0000004", 13, fromId="a000000c", summary=BLOB,
           details={"readFiles": [BLOB], "modifiedFiles": []}),
        _m("a000000e", "a000000d", 14, {"role": "assistant", "provider": "anthropic", "model": "claude-sonnet-4-5",
                                        "api": "anthropic-messages", "usage": usage, "stopReason": "stop",
                                        "content": [{"type": "text", "text": "done"}]}),
    ]


def write(folder: Path) -> Path:
    """The planted session as a file in ``folder``, a token in its name."""
    path = folder / f"planted-{FILE_TOKEN}.jsonl"
    path.write_text("".join(json.dumps(obj) + "\n" for obj in entries()), encoding="utf-8")
    return path
