"""Hostile model-fact files: ``models.json`` and ``models-store.json`` that are not files, not JSON Pi reads,
nested without end, or malformed in a way that once took time quadratic in their length."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from pikit.llm import model_catalog, usage_with_cost
from pikit.llm._modelsjson import MAX_FACT_BYTES, strip_json_comments
from tests.procs import env, in_agent as _run, pikit
from tests.timing import cpu_seconds_each

REPO = Path(__file__).resolve().parents[2]
QUICK = REPO / "data" / "sample_sessions" / "quick-tour.jsonl"
DEEP = "[" * 100_000 + "]" * 100_000
RATES = '"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0'
NEWER = '"lastModified": 1900000000000, "checkedAt": 1'


def _stored(*models: str) -> str:
    """A ``models-store.json`` whose anthropic entry (newer than the catalogs) holds ``models``."""
    return '{"anthropic": {' + NEWER + ', "models": [' + ", ".join(models) + "]}}"


def _model(model_id: str, extra: str = "", tiers: str = "") -> str:
    """A stored model of anthropic: its id, fields added, the tiers of its cost."""
    cost = "{" + RATES + (', "tiers": [' + tiers + "]" if tiers else "") + "}"
    return ('{"id": ' + model_id + ', "provider": "anthropic", "contextWindow": 1000, "maxTokens": 10, '
            '"cost": ' + cost + extra + "}")


def _custom(extra: str) -> str:
    """A ``models.json`` defining local/big with ``extra`` among its fields."""
    return ('{"providers": {"local": {"baseUrl": "http://x", "api": "openai-completions", '
            '"models": [{"id": "big", ' + extra + "}]}}}")


def _no_more_than_a_gigabyte() -> None:  # (in the child: an allocation without end fails fast, not the machine)
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


# ----------------------------------------------------------------- files that are no files


@pytest.mark.timeout(300)
@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and devices")
@pytest.mark.parametrize("name", ["models.json", "models-store.json"])
@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "/dev/urandom"])
def test_a_fifo_or_a_device_is_refused_without_reading(agent: Path, name: str, kind: str) -> None:
    """Each in a child held to a gigabyte: reading a device whole would take the machine's memory."""
    if kind == "fifo":
        os.mkfifo(agent / name)  # no writer: reading it would wait for ever
    else:
        (agent / name).symlink_to(kind)  # bytes without end
    library = subprocess.run([sys.executable, "-c", "import sys; from pikit.llm import model_catalog; "
                              "catalog = model_catalog(sys.argv[1]); print(catalog.problems[0]); "
                              "print(catalog.get('anthropic', 'claude-opus-4-5').context_window)", str(agent)],
                             capture_output=True, timeout=60, env=env(), preexec_fn=_no_more_than_a_gigabyte)
    assert library.returncode == 0, library.stderr.decode()
    problem, window = library.stdout.decode().splitlines()
    assert "not a regular file" in problem and ("FIFO" if kind == "fifo" else "character device") in problem
    assert window == "200000"  # the catalogs still stand
    for argv in (("models", "anthropic/claude-opus-4-5"), ("context", str(QUICK), "--no-pager", "--limit", "1")):
        done = pikit(*argv, extra_env={"PI_CODING_AGENT_DIR": str(agent)}, cwd=agent, timeout=60,
                     preexec_fn=_no_more_than_a_gigabyte)
        err = done.stderr.decode()
        assert done.returncode == 0 and "Traceback" not in err, err
        assert "200,000" in done.stdout.decode() and "catalog pi 1.6.0" in done.stdout.decode()
        assert err.count("\n") == 1 and err.startswith("pikit: warning: ") and "not a regular file" in err


def test_a_file_larger_than_the_bound_is_not_read(agent: Path) -> None:
    with (agent / "models-store.json").open("wb") as out:
        out.truncate(MAX_FACT_BYTES + 1)  # (sparse: nothing written)
    catalog = model_catalog(agent)
    assert len(catalog.problems) == 1 and "larger than 16 MiB" in catalog.problems[0]


# ----------------------------------------------------------------- content Pi reads differently, or not at all


HOSTILE: dict[str, tuple[str, str, str]] = {
    # name: (file, its text, what the one line says)
    "deep-models-json": ("models.json", _custom('"samplingParams": {"a": ' + DEEP + "}"), "nests deeper than"),
    "deep-store": ("models-store.json", _stored(_model('"deep"', ', "name": ' + DEEP)), "nests deeper than"),
    "deep-store-id": ("models-store.json", _stored(_model(DEEP)), "nests deeper than"),
    "store-id-list": ("models-store.json", _stored(_model('["x", "y"]'), _model('"kept"')), "id is not a string"),
    "store-id-object": ("models-store.json", _stored(_model('{"a": 1}'), _model('"kept"')), "id is not a string"),
    "store-nan": ("models-store.json", _stored(_model('"nan"', tiers='{"inputTokensAbove": NaN, ' + RATES + "}")),
                  "NaN is not valid JSON"),
    "models-json-infinity": ("models.json", _custom('"cost": {' + RATES + ', "tiers": [{"inputTokensAbove": '
                                                    'Infinity, ' + RATES + "}]}"), "Infinity is not valid JSON"),
    "models-json-1e999": ("models.json", _custom('"cost": {' + RATES + ', "tiers": [{"inputTokensAbove": 1e999, '
                                                 + RATES + "}]}"), "inputTokensAbove: required, a finite number"),
    "models-json-huge-integer": ("models.json", _custom('"contextWindow": 1' + "0" * 400),
                                 "contextWindow: not a number above 0"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_content_is_one_line_and_the_rest_stands(agent: Path, case: str) -> None:
    name, text, says = HOSTILE[case]
    (agent / name).write_text(text, encoding="utf-8")
    catalog = model_catalog(agent)
    assert len(catalog.problems) == 1 and says in catalog.problems[0] and "\n" not in catalog.problems[0]
    assert catalog.get("anthropic", "claude-opus-4-5") is not None
    assert catalog.get("local", "big") is None  # Pi refuses each models.json above
    assert [info.model_id for info in catalog if info.source == "models-store.json"] == (
        ["kept"] if "id" in case and "deep" not in case else [])
    for argv in (("models", "anthropic/claude-opus-4-5"), ("models", "--json"),
                 ("context", str(QUICK), "--no-pager", "--limit", "1")):
        code, out, err = _run(agent, *argv)
        assert code == 0 and out, err
        assert err.count("\n") == 1 and err.startswith("pikit: warning: ") and says in err  # (no traceback)


def test_a_stored_threshold_of_infinity_is_kept_and_never_applies(agent: Path) -> None:
    """JSON.parse reads 1e999 as Infinity, and Pi keeps the stored model (its tier never applies)."""
    tier = '{"inputTokensAbove": 1e999, "input": 9, "output": 9, "cacheRead": 0, "cacheWrite": 0}'
    (agent / "models-store.json").write_text(_stored(_model('"far"', tiers=tier)))
    catalog = model_catalog(agent)
    far = catalog.get("anthropic", "far")
    assert catalog.problems == () and far is not None and far.pricing is not None
    assert far.pricing.tiers[0].input_tokens_above == float("inf")
    assert usage_with_cost({"input": 10**9, "output": 0}, far.pricing)["cost"]["input"] == 1000.0  # base price
    code, out, err = _run(agent, "models", "anthropic/far")
    assert (code, err) == (0, "") and "never (above Infinity input tokens)" in out
    code, out, err = _run(agent, "models", "anthropic/far", "--json")
    assert (code, err) == (0, "") and json.loads(out)["cost"]["tiers"][0]["inputTokensAbove"] is None  # as Pi prints


# ----------------------------------------------------------------- comments stripped in linear time


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("unit", ['\\"', '\\",}', '\\"//c\n', '\\"\u2028, ]'],
                         ids=["escaped-quotes", "trailing-commas", "comments", "line-separators"])
def test_stripping_comments_from_a_malformed_file_is_linear(unit: str) -> None:
    """A string that never closes, over escaped quotes: one text sixteen times as long costs at most three times
    what sixteen short ones cost, the same characters in all (stripping took time quadratic in the length: the
    long text cost thirteen times as much)."""
    short = '"' + unit * (8_192 // len(unit))
    long = '"' + unit * (16 * 8_192 // len(unit))
    parts, whole = cpu_seconds_each([lambda: [strip_json_comments(short) for _ in range(16)],
                                     lambda: strip_json_comments(long)], repeat=5)
    assert whole <= 3 * parts, f"one text 16x as long took {whole / parts:.1f}x the CPU time of 16 short ones"


@pytest.mark.parametrize(("text", "stripped"), [
    ('{"a": 1, // note\n "b": [1, 2,],}', '{"a": 1, \n "b": [1, 2]}'),
    ('{"url": "http://x", "s": "a,}"}', '{"url": "http://x", "s": "a,}"}'),  # inside strings: kept
    ('{"a": "\\"//"} // c', '{"a": "\\"//"} '),
    ('"open // comment\n,]', '"open \n]'),  # no closing quote: not a string, so the comment goes
    ('"a\\\u2028//" x', '"a\\\u2028'),  # JavaScript's "." stops at a line separator: no string, a comment
])
def test_stripping_follows_pis_expressions(text: str, stripped: str) -> None:
    assert strip_json_comments(text) == stripped
