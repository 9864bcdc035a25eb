"""pikit._palette: one colour per segment and role, used by the charts (and the widgets' CSS)."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from matplotlib.colors import to_hex

import pikit
from pikit import _palette as palette, charts

PACKAGE = Path(pikit.__file__).resolve().parent
HEX = re.compile(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b")


def test_colours_are_hex_and_segments_have_labels() -> None:
    for table in (palette.SEGMENTS, palette.LINES, palette.ROLES, palette.ROLE_TEXT, palette.DIFF):
        assert all(re.fullmatch(r"#[0-9a-f]{6}", v) for v in table.values()), table
    assert set(palette.SEGMENT_LABELS) == set(palette.SEGMENTS)
    assert set(palette.ROLES) == set(palette.ROLE_TEXT)
    assert len(set(palette.SEGMENTS.values())) == len(palette.SEGMENTS)


def test_series_cycle_and_role_fallback() -> None:
    assert palette.series_color(0) == palette.SERIES[0]
    assert palette.series_color(len(palette.SERIES) + 1) == palette.SERIES[1]
    assert palette.role_color("user") == (palette.ROLES["user"], palette.ROLE_TEXT["user"])
    assert palette.role_color("nonsense")[0].startswith("#")


def test_css_variables_name_every_colour() -> None:
    css = palette.css_variables(".pikit")
    assert css.startswith(".pikit {") and css.endswith("}")
    assert f"--pikit-segment-kept: {palette.SEGMENTS['kept']};" in css
    assert f"--pikit-line-keep-recent: {palette.LINES['keep_recent']};" in css
    assert f"--pikit-role-tool-result: {palette.ROLES['toolResult']};" in css
    assert f"--pikit-role-tool-result-text: {palette.ROLE_TEXT['toolResult']};" in css
    assert css.count("--pikit-series-") == len(palette.SERIES)


def test_charts_take_every_colour_from_the_palette() -> None:
    source = (PACKAGE / "charts.py").read_text(encoding="utf-8")
    assert HEX.findall(source) == []


def test_budget_chart_draws_segments_and_lines_in_palette_colours() -> None:
    session = pikit.load(str(PACKAGE.parent / "data" / "sample_sessions" / "refactor-auth.jsonl"))
    fig = charts.budget(session.context(), 32_000, 4_000, 8_000)
    ax = fig.axes[0]
    for key, colour in palette.SEGMENTS.items():
        if key == "unitemized":
            continue
        (bar,) = [p for p in ax.patches if p.get_gid() == f"budget:{key}"]
        assert to_hex(bar.get_facecolor()) == colour
    lines = {line.get_gid(): to_hex(line.get_color()) for line in ax.lines}
    assert lines["threshold"] == palette.LINES["threshold"]
    assert lines["window"] == palette.LINES["window"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(t.startswith(palette.SEGMENT_LABELS["kept"]) for t in legend)
