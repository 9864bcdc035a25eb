"""The public surface of pikit.llm, and the promise that importing it does not import httpx."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pikit.llm

EXPECTED = {
    "SUMMARIZERS",
    "SYSTEM_PROMPT",
    "UNKNOWN_WINDOW_HINT",
    "AnthropicSummarizer",
    "FACTS_PER_CALL",
    "MAX_PROMPT_CHARS",
    "ContextWindow",
    "CostTier",
    "ModelCatalog",
    "ModelInfo",
    "OfflineSummarizer",
    "MAX_GRADE",
    "OpenAISummarizer",
    "PROBE_KINDS",
    "Pricing",
    "Probe",
    "ProbeClient",
    "ProbeResult",
    "RetryPolicy",
    "agent_dir",
    "build_prompt",
    "get_summarizer",
    "judge",
    "lookup_model",
    "model_catalog",
    "model_window",
    "probe",
    "usage_with_cost",
}

REPO = Path(pikit.llm.__file__).resolve().parents[2]


def test_all_lists_exactly_the_public_names() -> None:
    assert len(pikit.llm.__all__) == len(set(pikit.llm.__all__))
    assert set(pikit.llm.__all__) == EXPECTED
    public = {
        name
        for name in dir(pikit.llm)
        if not name.startswith("_") and not isinstance(getattr(pikit.llm, name), types.ModuleType)
        and name != "annotations"
    }
    assert public == EXPECTED


def test_every_name_resolves() -> None:
    for name in pikit.llm.__all__:
        assert getattr(pikit.llm, name) is not None
    namespace: dict[str, object] = {}
    exec("from pikit.llm import *", namespace)
    assert set(namespace) >= EXPECTED


def _run(code: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, check=False
    )


def test_import_does_not_import_httpx() -> None:
    code = (
        "import sys\n"
        "import pikit.llm\n"
        "from pikit.llm import OpenAISummarizer, AnthropicSummarizer, build_prompt\n"
        "from pikit.compaction import SummaryRequest\n"
        "OpenAISummarizer('m', 'http://127.0.0.1:9/v1'); AnthropicSummarizer('m', 'http://127.0.0.1:9/v1')\n"
        "build_prompt(SummaryRequest('history', 'x'))\n"
        "assert 'httpx' not in sys.modules, sorted(m for m in sys.modules if 'http' in m)\n"
        "print('ok')\n"
    )
    done = _run(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_httpx_is_imported_on_first_request() -> None:
    code = (
        "import sys\n"
        "from pikit.errors import SummarizerError\n"
        "from pikit.llm import OpenAISummarizer\nfrom pikit.compaction import SummaryRequest\n"
        "s = OpenAISummarizer('m', 'http://127.0.0.1:9/v1', retries=0)\n"
        "try:\n"
        "    s.summarize(SummaryRequest('history', 'x'))\n"
        "except SummarizerError as e:\n"
        "    print('error', 'httpx' in sys.modules)\n"
    )
    done = _run(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "error True"
