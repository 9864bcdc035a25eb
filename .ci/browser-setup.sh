#!/usr/bin/env bash
# Prepare a machine for the real-browser tests (tests/browser). Idempotent: safe to re-run.
#
#  1. Installs Debian's chromium if /usr/bin/chromium is missing (apt-get; root or sudo).
#     Playwright drives that binary directly: never run `playwright install`.
#  2. Writes JupyterLab's overrides.json (no news popup, no update check) into the active
#     Python environment: <sys.prefix>/share/jupyter/lab/settings/overrides.json, merged into
#     any existing file.
#
# Environment: PYTHON  interpreter of the environment to configure (default: python, else python3)
#              CHROMIUM  chromium path to check (default: /usr/bin/chromium)
set -euo pipefail

CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
if [[ -z "${PYTHON:-}" ]]; then
    if command -v python >/dev/null 2>&1; then PYTHON=python; else PYTHON=python3; fi
fi

log() { printf '[browser-setup] %s\n' "$*"; }

# --- 1. chromium -------------------------------------------------------------------------
if [[ -x "$CHROMIUM" ]]; then
    log "chromium present: $CHROMIUM"
else
    log "chromium missing at $CHROMIUM: installing Debian's chromium"
    SUDO=""
    if [[ "$(id -u)" -ne 0 ]]; then
        if command -v sudo >/dev/null 2>&1; then
            SUDO="sudo"
        else
            log "error: need root or sudo to apt-get install chromium" >&2
            exit 1
        fi
    fi
    $SUDO apt-get update
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
    if [[ ! -x "$CHROMIUM" ]]; then
        log "error: chromium still not found at $CHROMIUM after apt-get install" >&2
        exit 1
    fi
fi
# The Debian launcher may print a harmless "[: …: unexpected operator" line; ignore it.
log "$("$CHROMIUM" --version 2>/dev/null || echo 'chromium --version failed (not fatal)')"

# --- 2. JupyterLab overrides ---------------------------------------------------------------
"$PYTHON" - <<'PY'
"""Merge the quiet-notification settings into <sys.prefix>/share/jupyter/lab/settings/overrides.json."""
import json
import sys
from pathlib import Path

QUIET = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
}

path = Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
path.parent.mkdir(parents=True, exist_ok=True)
current = {}
if path.exists():
    try:
        current = json.loads(path.read_text(encoding="utf-8") or "{}")
    except json.JSONDecodeError as exc:
        sys.exit(f"[browser-setup] error: {path} is not valid JSON ({exc}); fix or remove it")
    if not isinstance(current, dict):
        sys.exit(f"[browser-setup] error: {path} must hold a JSON object")
merged = dict(current)
for plugin, settings in QUIET.items():
    merged[plugin] = {**merged.get(plugin, {}), **settings}
if merged != current or not path.exists():
    path.write_text(json.dumps(merged, indent=2) + "\n", encoding="utf-8")
    print(f"[browser-setup] wrote {path}")
else:
    print(f"[browser-setup] up to date: {path}")
PY
