"""The rules' recall on random keys of every base64 alphabet, and their precision on paths and prose."""

from __future__ import annotations

import random
import string

import pytest

import pikit
from pikit._redaction.rules import ENTROPY_LIMIT

_STANDARD = string.ascii_letters + string.digits + "+/"
_URL_SAFE = string.ascii_letters + string.digits + "-_"


def _entropy(word: str) -> float:
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

    return float(Base64HighEntropyString(limit=ENTROPY_LIMIT).calculate_shannon_entropy(word))


def _mixed(word: str) -> bool:
    return any(c.isdigit() for c in word) and any(c.islower() for c in word) and any(c.isupper() for c in word)


def _left(redactor: pikit.Redactor, key: str, text: str) -> bool:
    """Whether 8 characters or more of ``key`` are left in ``text`` once redacted."""
    out = redactor.redact_text(text, pikit.Placeholders())
    return any(key[i:i + 8] in out for i in range(len(key) - 7))


@pytest.fixture(scope="module")
def redactor() -> pikit.Redactor:
    return pikit.Redactor(environment=False)


def test_random_keys_of_the_documented_shape_go_whole(redactor: pikit.Redactor) -> None:
    """A word of 24+ base64 characters, mixed case and digits, 4.5 bits per character: slashes,
    plus signs, padding and url-safe characters included."""
    rng = random.Random(31)
    keys: list[str] = []
    while len(keys) < 400:
        alphabet = _STANDARD if len(keys) % 2 else _URL_SAFE
        core = "".join(rng.choice(alphabet) for _ in range(rng.randint(24, 64)))
        separators = core.count("-") + core.count("_")
        if not _mixed(core) or _entropy(core) < ENTROPY_LIMIT or separators > len(core) / 8:
            continue  # (many - and _: a slug, as the README says)
        keys.append(core + ("=" * rng.randint(0, 2) if alphabet == _STANDARD else ""))
    assert sum("/" in k for k in keys) > 50
    left = [k for k in keys if _left(redactor, k, f'the key "{k}" and {k} again')]
    assert left == []


def test_a_bare_aws_secret_key_goes(redactor: pikit.Redactor) -> None:
    rng = random.Random(32)
    keys = [k for k in ("".join(rng.choice(_STANDARD) for _ in range(40)) for _ in range(400)) if _mixed(k)]
    assert [k for k in keys if _left(redactor, k, f"export {k}\n{k}")] == []
    documented = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # AWS's own example
    assert redactor.spans(f"secret {documented}") == [(7, 47, "high-entropy")]


@pytest.mark.parametrize("text", [
    "see src/cart/total.ts and src/cart/CartTotalWidget2/index.tsx",
    "/var/folders/49/l4171l3n219_xwq30fmyzr8w0000gn/T/TemporaryItems/NSIRD_screencaptureui_tby1cQ/Screens",
    "https://github.com/badlogic/pi-mono/blob/3f9a1c2b7d4e5f60718293a4b5c6d7e8f9012345/packages/ai/src/Models2",
    "node_modules/@mariozechner/pi-coding-agent/dist/core/SessionManager3.js",
    "docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-ec2-vpc",
    "The quick brown fox jumps over the lazy dog; and/or the 2nd one/Another2Thing.",
])
def test_paths_and_prose_are_kept(redactor: pikit.Redactor, text: str) -> None:
    assert redactor.spans(text) == []


@pytest.mark.parametrize("escape", ["\\/", "\\u002f", "\\u002F", "\\\\\\/"])
def test_a_key_split_by_json_escapes_goes_whole_with_one_placeholder(redactor: pikit.Redactor, escape: str) -> None:
    key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    hook = "https://hooks.slack.com/services/T0A1B2C3D/B0A1B2C3D/" + "Xy7" * 8
    escaped = key.replace("/", escape)
    text = f'{{"aws": "{escaped}", "hook": "{hook.replace("/", escape)}"}} and {key} plain'
    out = redactor.redact_text(text, pikit.Placeholders())
    assert out == '{"aws": "[REDACTED:high-entropy:1]", "hook": "[REDACTED:slack-webhook:1]"} and ' \
                  "[REDACTED:high-entropy:1] plain"


def test_a_token_after_an_underscore_goes(redactor: pikit.Redactor) -> None:
    """A file name as Pi writes it, with a token for its id: ``<timestamp>_<token>.jsonl``."""
    token = "ghp_" + "K8s" * 12
    text = f"/home/dev/.pi/agent/sessions/--x--/2026-01-01T00-00-00-000Z_{token}.jsonl MY_KEY_{token}"
    assert redactor.redact_text(text, pikit.Placeholders()) == \
        "/home/dev/.pi/agent/sessions/--x--/2026-01-01T00-00-00-000Z_[REDACTED:github-token:1].jsonl " \
        "MY_KEY_[REDACTED:github-token:1]"


def test_a_key_percent_escaped_in_a_url_goes_whole(redactor: pikit.Redactor) -> None:
    key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY+9=="
    escaped = key.replace("/", "%2F").replace("+", "%2b").replace("=", "%3D")
    out = redactor.redact_text(f"https://acct.blob.core.windows.net/c?sv=2024&sig={escaped}&se=1 and {key}",
                               pikit.Placeholders())
    assert out == "https://acct.blob.core.windows.net/c?sv=2024&sig=[REDACTED:high-entropy:1]&se=1 and " \
                  "[REDACTED:high-entropy:1]"


@pytest.mark.parametrize("reference", ["&#x2F;", "&#X2f;", "&#47;"])
def test_a_key_split_by_html_character_references_goes_whole(redactor: pikit.Redactor, reference: str) -> None:
    key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    out = redactor.redact_text(f"<code>{key.replace('/', reference)}</code>", pikit.Placeholders())
    assert out == "<code>[REDACTED:high-entropy:1]</code>"
