"""Compaction settings: loading, merging, per-model resolution, validation, trigger, CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pikit.cli._json import compaction as compaction_json
from pikit.compaction import CompactionSettings, Settings, load_settings
from pikit.errors import PikitError, SettingsError


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def settings_file(tmp_path: Path, data: Any, name: str = "settings.json") -> str:
    return str(write_json(tmp_path / name, data))


# ---------------------------------------------------------------- loading and merging


def test_no_files_gives_the_defaults(agent_dir: Path, project: Path) -> None:
    settings = load_settings(cwd=str(project))
    assert settings.files == []
    effective = settings.for_model("anthropic/claude-sonnet-4-5")
    assert (effective.enabled, effective.reserve_tokens, effective.keep_recent_tokens) == (True, 16384, 20000)
    assert dict(effective.sources) == {"reserveTokens": "default", "keepRecentTokens": "default"}
    assert settings.branch_summary_reserve_tokens == 16384


def test_global_file_is_read_from_the_agent_dir(agent_dir: Path, project: Path) -> None:
    write_json(agent_dir / "settings.json", {"compaction": {"reserveTokens": 1234}})
    settings = load_settings(cwd=str(project))
    assert settings.files == [str(agent_dir / "settings.json")]
    assert settings.for_model().reserve_tokens == 1234
    assert settings.for_model().keep_recent_tokens == 20000


def test_project_wins_and_nested_objects_merge(agent_dir: Path, project: Path) -> None:
    write_json(agent_dir / "settings.json", {
        "theme": "dark",
        "compaction": {"enabled": True, "reserveTokens": 1000, "keepRecentTokens": 2000,
                       "modelOverrides": {"a/b": {"reserveTokens": 10}, "c/d": {"keepRecentTokens": 30}}},
        "branchSummary": {"reserveTokens": 500},
    })
    write_json(project / ".pi" / "settings.json", {
        "compaction": {"keepRecentTokens": 2500, "modelOverrides": {"a/b": {"keepRecentTokens": 20}}},
    })
    settings = load_settings(cwd=str(project))
    assert settings.files == [str(agent_dir / "settings.json"), str(project / ".pi" / "settings.json")]
    assert settings.data["theme"] == "dark"
    # the project's keepRecentTokens wins, the global reserveTokens survives next to it
    plain = settings.for_model()
    assert (plain.reserve_tokens, plain.keep_recent_tokens) == (1000, 2500)
    # modelOverrides merged key by key, down to the values of one model
    assert settings.overrides() == {"a/b": {"reserveTokens": 10, "keepRecentTokens": 20},
                                    "c/d": {"keepRecentTokens": 30}}
    ab = settings.for_model("a/b")
    assert (ab.reserve_tokens, ab.keep_recent_tokens) == (10, 20)
    cd = settings.for_model("c/d")
    assert (cd.reserve_tokens, cd.keep_recent_tokens) == (1000, 30)
    assert settings.branch_summary_reserve_tokens == 500


def test_project_only(agent_dir: Path, project: Path) -> None:
    write_json(project / ".pi" / "settings.json", {"compaction": {"enabled": False}})
    settings = load_settings(cwd=str(project))
    assert settings.files == [str(project / ".pi" / "settings.json")]
    assert settings.for_model().enabled is False


def test_project_scalar_replaces_global_object_value(agent_dir: Path, project: Path) -> None:
    write_json(agent_dir / "settings.json", {"compaction": {"reserveTokens": 100}, "list": [1, 2]})
    write_json(project / ".pi" / "settings.json", {"compaction": {"reserveTokens": 0}, "list": [3]})
    settings = load_settings(cwd=str(project))
    assert settings.for_model().reserve_tokens == 0  # 0 is a valid value, not "missing"
    assert settings.data["list"] == [3]


def test_explicit_file_ignores_global_and_project(agent_dir: Path, project: Path, tmp_path: Path) -> None:
    write_json(agent_dir / "settings.json", {"compaction": {"reserveTokens": 1}})
    write_json(project / ".pi" / "settings.json", {"compaction": {"keepRecentTokens": 2}})
    path = settings_file(tmp_path, {"compaction": {"reserveTokens": 3000}})
    settings = load_settings(path, cwd=str(project))
    assert settings.files == [path]
    effective = settings.for_model()
    assert (effective.reserve_tokens, effective.keep_recent_tokens) == (3000, 20000)


def test_empty_file_counts_as_empty_object(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("  \n", encoding="utf-8")
    assert load_settings(str(path)).for_model().reserve_tokens == 16384


# ---------------------------------------------------------------- per-model resolution


def test_each_value_resolves_independently(tmp_path: Path) -> None:
    path = settings_file(tmp_path, {"compaction": {
        "reserveTokens": 4000,
        "modelOverrides": {"openai/gpt-5": {"keepRecentTokens": 7000}, "x/y": {"reserveTokens": 9}},
    }})
    settings = load_settings(path)
    gpt = settings.for_model("openai/gpt-5")
    assert (gpt.reserve_tokens, gpt.keep_recent_tokens) == (4000, 7000)  # ordinary, override
    assert dict(gpt.sources) == {"reserveTokens": "settings", "keepRecentTokens": "modelOverrides[openai/gpt-5]"}
    xy = settings.for_model("x/y")
    assert (xy.reserve_tokens, xy.keep_recent_tokens) == (9, 20000)  # override, default
    assert dict(xy.sources) == {"reserveTokens": "modelOverrides[x/y]", "keepRecentTokens": "default"}
    assert xy.model == "x/y"


def test_model_keys_are_exact_and_case_sensitive(tmp_path: Path) -> None:
    path = settings_file(tmp_path, {"compaction": {"modelOverrides": {
        "anthropic/Claude-Sonnet": {"reserveTokens": 1},
        "openrouter/anthropic/claude-sonnet-4-5": {"reserveTokens": 2, "keepRecentTokens": 3},
    }}})
    settings = load_settings(path)
    assert settings.for_model("anthropic/claude-sonnet").reserve_tokens == 16384
    assert settings.for_model("anthropic/Claude-Sonnet").reserve_tokens == 1
    assert settings.for_model("Anthropic/Claude-Sonnet").reserve_tokens == 16384
    # ids may hold "/": the whole key must match, not a prefix or the part after the provider
    routed = settings.for_model("openrouter/anthropic/claude-sonnet-4-5")
    assert (routed.reserve_tokens, routed.keep_recent_tokens) == (2, 3)
    assert settings.for_model("anthropic/claude-sonnet-4-5").reserve_tokens == 16384
    assert settings.for_model("openrouter/anthropic").reserve_tokens == 16384
    assert settings.for_model(None).reserve_tokens == 16384


def test_whole_float_values_are_integers(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"compaction": {"reserveTokens": 4000.0, "keepRecentTokens": 1e3}}', encoding="utf-8")
    effective = load_settings(str(path)).for_model()
    assert (effective.reserve_tokens, effective.keep_recent_tokens) == (4000, 1000)
    assert isinstance(effective.reserve_tokens, int)


def test_json_shape(tmp_path: Path) -> None:
    settings = load_settings(settings_file(tmp_path, {"compaction": {"keepRecentTokens": 5}}))
    assert compaction_json.compaction_settings(settings.for_model("p/m")) == {
        "model": "p/m", "enabled": True, "reserveTokens": 16384, "keepRecentTokens": 5,
        "sources": {"reserveTokens": "default", "keepRecentTokens": "settings"},
    }


# ---------------------------------------------------------------- validation


def assert_one_line(error: BaseException, *needles: str) -> None:
    message = str(error)
    assert "\n" not in message, message
    for needle in needles:
        assert needle in message, (needle, message)


@pytest.mark.parametrize("value", [-1, 1.5, "4000", True, False, [1], {"a": 1}, 2**53])
@pytest.mark.parametrize("key", ["reserveTokens", "keepRecentTokens"])
def test_bad_ordinary_value_is_an_error_naming_file_and_key(tmp_path: Path, key: str, value: Any) -> None:
    path = settings_file(tmp_path, {"compaction": {key: value}})
    with pytest.raises(SettingsError) as info:
        load_settings(path)
    assert_one_line(info.value, path, f"compaction.{key}")


@pytest.mark.parametrize("value", [-5, 0.25, "10", True])
@pytest.mark.parametrize("key", ["reserveTokens", "keepRecentTokens"])
def test_bad_override_value_is_an_error(tmp_path: Path, key: str, value: Any) -> None:
    path = settings_file(tmp_path, {"compaction": {"modelOverrides": {"a/b/c": {key: value}}}})
    settings = load_settings(path)
    with pytest.raises(SettingsError) as info:
        settings.for_model("a/b/c")
    assert_one_line(info.value, path, key, "a/b/c")
    with pytest.raises(SettingsError):
        settings.overrides()


def test_bad_ordinary_value_is_an_error_even_when_an_override_is_set(tmp_path: Path) -> None:
    path = settings_file(tmp_path, {"compaction": {"reserveTokens": -1,
                                                   "modelOverrides": {"a/b": {"reserveTokens": 5}}}})
    with pytest.raises(SettingsError):
        load_settings(path)


def test_bad_value_in_the_project_file_is_an_error(agent_dir: Path, project: Path) -> None:
    write_json(agent_dir / "settings.json", {"compaction": {"reserveTokens": 100}})
    write_json(project / ".pi" / "settings.json", {"compaction": {"keepRecentTokens": "lots"}})
    with pytest.raises(SettingsError) as info:
        load_settings(cwd=str(project))
    assert_one_line(info.value, str(project / ".pi" / "settings.json"), "compaction.keepRecentTokens")


@pytest.mark.parametrize("overrides", [[], "a/b", 5])
def test_non_object_model_overrides(tmp_path: Path, overrides: Any) -> None:
    path = settings_file(tmp_path, {"compaction": {"modelOverrides": overrides}})
    with pytest.raises(SettingsError) as info:
        load_settings(path).for_model("a/b")
    assert_one_line(info.value, path, "modelOverrides")


@pytest.mark.parametrize("entry", [5, "fast", [1, 2], True])
def test_non_object_override_entry(tmp_path: Path, entry: Any) -> None:
    path = settings_file(tmp_path, {"compaction": {"modelOverrides": {"a/b": entry}}})
    settings = load_settings(path)
    with pytest.raises(SettingsError) as info:
        settings.for_model("a/b")
    assert_one_line(info.value, path, "modelOverrides", "a/b")
    assert settings.for_model("other/model").reserve_tokens == 16384  # another model is not concerned


@pytest.mark.parametrize("value", ["true", 1, 0, [True]])
def test_non_boolean_enabled(tmp_path: Path, value: Any) -> None:
    path = settings_file(tmp_path, {"compaction": {"enabled": value}})
    with pytest.raises(SettingsError) as info:
        load_settings(path)
    assert_one_line(info.value, path, "compaction.enabled")


def test_non_object_compaction_section(tmp_path: Path) -> None:
    path = settings_file(tmp_path, {"compaction": 5})
    with pytest.raises(SettingsError) as info:
        load_settings(path)
    assert_one_line(info.value, path, "compaction")


def test_invalid_json_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{\n  "compaction": {\n    "reserveTokens": 100,\n  }\n}\n', encoding="utf-8")
    with pytest.raises(SettingsError) as info:
        load_settings(str(path))
    assert_one_line(info.value, str(path), "line 4")


def test_invalid_json_in_global_file(agent_dir: Path, project: Path) -> None:
    (agent_dir / "settings.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(SettingsError) as info:
        load_settings(cwd=str(project))
    assert_one_line(info.value, str(agent_dir / "settings.json"), "line 1")


def test_top_level_must_be_an_object(tmp_path: Path) -> None:
    path = settings_file(tmp_path, [1, 2])
    with pytest.raises(SettingsError) as info:
        load_settings(path)
    assert_one_line(info.value, path)


def test_missing_explicit_file(tmp_path: Path) -> None:
    path = str(tmp_path / "nope.json")
    with pytest.raises(SettingsError) as info:
        load_settings(path)
    assert_one_line(info.value, path)
    assert isinstance(info.value, PikitError)


@pytest.mark.parametrize("value", [-1, 0.5, "1", True])
def test_bad_branch_summary_reserve(tmp_path: Path, value: Any) -> None:
    settings = load_settings(settings_file(tmp_path, {"branchSummary": {"reserveTokens": value}}))
    with pytest.raises(SettingsError) as info:
        _ = settings.branch_summary_reserve_tokens
    assert_one_line(info.value, "branchSummary.reserveTokens")


def test_branch_summary_reserve(tmp_path: Path) -> None:
    settings = load_settings(settings_file(tmp_path, {"branchSummary": {"reserveTokens": 0},
                                                      "compaction": {"reserveTokens": 7}}))
    assert settings.branch_summary_reserve_tokens == 0
    assert settings.for_model().reserve_tokens == 7


def test_non_object_branch_summary_section_is_an_error(tmp_path: Path) -> None:
    settings = load_settings(settings_file(tmp_path, {"branchSummary": 5}))
    with pytest.raises(SettingsError):
        _ = settings.branch_summary_reserve_tokens


# ---------------------------------------------------------------- trigger


def test_threshold_and_trigger() -> None:
    s = CompactionSettings(True, 3000, 4000)
    assert s.threshold(16384) == 13384
    assert not s.should_compact(13384, 16384)  # equal to the threshold: no compaction
    assert s.should_compact(13385, 16384)
    assert not s.should_compact(0, 16384)


def test_disabled_never_fires() -> None:
    s = CompactionSettings(False, 3000, 4000)
    assert s.threshold(16384) == 13384
    assert not s.should_compact(10**9, 16384)
    assert not s.should_compact(5, 0)


def test_trigger_from_loaded_settings(tmp_path: Path) -> None:
    settings = load_settings(settings_file(tmp_path, {"compaction": {
        "reserveTokens": 1000, "modelOverrides": {"a/b": {"reserveTokens": 5000}}}}))
    assert settings.for_model().should_compact(9001, 10000)
    assert not settings.for_model("a/b").should_compact(5000, 10000)
    assert settings.for_model("a/b").should_compact(5001, 10000)


def test_settings_dataclass_direct() -> None:
    assert Settings({}).for_model().reserve_tokens == 16384
    with pytest.raises(SettingsError) as info:
        Settings({"compaction": {"reserveTokens": -3}}).for_model()
    assert_one_line(info.value, "the built-in defaults", "compaction.reserveTokens")


# ---------------------------------------------------------------- CLI


def run_cli(*args: str, cwd: Path, agent: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent)}
    return subprocess.run([sys.executable, "-m", "pikit", *args], capture_output=True, text=True, timeout=60,
                          check=False, cwd=cwd, env=env)


def test_cli_settings_json(tmp_path: Path) -> None:
    overrides = {"openrouter/anthropic/claude": {"keepRecentTokens": 4000}, "z/z": {"reserveTokens": 1}}
    data = {"compaction": {"reserveTokens": 3000, "modelOverrides": overrides},
            "branchSummary": {"reserveTokens": 2048}}
    path = settings_file(tmp_path, data)
    done = run_cli("settings", "--settings", path, "--model", "openrouter/anthropic/claude", "--json",
                   cwd=tmp_path, agent=tmp_path / "no-agent")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    api = load_settings(path)
    assert out["files"] == [path]
    assert out["effective"] == compaction_json.compaction_settings(api.for_model("openrouter/anthropic/claude"))
    assert out["effective"]["reserveTokens"] == 3000
    assert out["effective"]["keepRecentTokens"] == 4000
    assert out["effective"]["sources"] == {"reserveTokens": "settings",
                                           "keepRecentTokens": "modelOverrides[openrouter/anthropic/claude]"}
    assert out["modelOverrides"] == overrides
    assert out["branchSummary"] == {"reserveTokens": 2048}


def test_cli_settings_bad_value_fails_with_one_line(tmp_path: Path) -> None:
    path = settings_file(tmp_path, {"compaction": {"keepRecentTokens": -1}})
    done = run_cli("settings", "--settings", path, "--json", cwd=tmp_path, agent=tmp_path / "no-agent")
    assert done.returncode != 0
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert path in lines[0] and "compaction.keepRecentTokens" in lines[0]


def test_null_values_follow_pi(tmp_path: Path) -> None:
    # Pi reads `enabled ?? default` (null is the default) but refuses a null token count.
    assert load_settings(settings_file(tmp_path, {"compaction": {"enabled": None}})).for_model().enabled is True
    with pytest.raises(SettingsError, match=r"compaction\.reserveTokens"):
        load_settings(settings_file(tmp_path, {"compaction": {"reserveTokens": None}}))
    overrides = {"compaction": {"modelOverrides": {"a/b": {"keepRecentTokens": None}}}}
    with pytest.raises(SettingsError, match="keepRecentTokens"):
        load_settings(settings_file(tmp_path, overrides)).for_model("a/b")


# ---------------------------------------------------------------- odd files
DEEP = 100_000


def test_invalid_utf8_is_read_as_node_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(b'{"compaction": {"keepRecentTokens": 1234}, "name\xff\xfe": "\xc3"}')
    assert load_settings(str(path)).for_model(None).keep_recent_tokens == 1234
    path.write_bytes(b'\xff{"compaction": 1}')
    with pytest.raises(SettingsError, match="not valid JSON"):
        load_settings(str(path))


@pytest.mark.timeout(120)
@pytest.mark.slow
def test_nesting_100k_levels_deep_is_merged_and_reported_without_a_traceback(agent_dir: Path,
                                                                              project: Path) -> None:
    deep = '{"a":' * DEEP + "1" + "}" * DEEP
    (agent_dir / "settings.json").write_text('{"compaction": {"keepRecentTokens": 10}, "x": ' + deep + "}")
    (project / ".pi").mkdir()
    (project / ".pi" / "settings.json").write_text('{"x": ' + deep + "}")
    assert load_settings(cwd=str(project)).for_model(None).keep_recent_tokens == 10  # merged, both deep
    (project / ".pi" / "settings.json").write_text('{"compaction": {"reserveTokens": ' + "[" * DEEP + "]" * DEEP
                                                   + "}}")
    with pytest.raises(SettingsError, match=r"reserveTokens is \[\[\[.*…; expected") as info:
        load_settings(cwd=str(project))
    assert len(str(info.value)) < 400
    proc = subprocess.run([sys.executable, "-m", "pikit", "settings"], capture_output=True, text=True, timeout=60,
                          cwd=project, env={**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir)})
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
