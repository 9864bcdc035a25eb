"""Real-browser test harness: JupyterLab server + Chromium (Playwright) + kernel access.

The pytest fixtures live in ``tests/browser/conftest.py``; this module holds the plain
functions they (and the tests) use. Import it as ``tests.browser.jupyter`` — the bare
name ``jupyter`` is taken by ``jupyter_core``'s top-level ``jupyter.py``; the conftest puts the
repository root on ``sys.path`` so the dotted import works under ``pytest`` and
``python -m pytest`` alike.

Typical use in a test::

    from tests.browser.jupyter import kernel_exec, open_notebook, run_all, write_notebook

    @pytest.mark.browser
    def test_something(jupyter_server, page):
        write_notebook(jupyter_server, "demo.ipynb", ["import ipywidgets as w", "b = w.Button()\\nb"])
        open_notebook(page, jupyter_server, "demo.ipynb")
        run_all(page)
        page.locator(".jp-OutputArea-output button.widget-button").click()
        assert kernel_exec(jupyter_server, "demo.ipynb", "print(1 + 1)") == "2\\n"

All timeouts taken by this module are in **seconds** (Playwright's own API uses ms).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - typing only; playwright may be absent
    from playwright.sync_api import Page

__all__ = [
    "ARTIFACTS_DIR",
    "CHROMIUM_ARGS",
    "CHROMIUM_PATH",
    "REPO_ROOT",
    "HarnessError",
    "JupyterServer",
    "KernelExecError",
    "ci_enabled",
    "free_port",
    "kernel_exec",
    "missing_browser_prerequisites",
    "open_notebook",
    "run_all",
    "screenshot",
    "start_jupyter_server",
    "status_bar_text",
    "wait_for_kernel_idle",
    "wait_for_kernel_output",
    "write_notebook",
]

#: Repository root (``tests/browser/jupyter.py`` -> two levels up).
REPO_ROOT: Path = Path(__file__).resolve().parents[2]
#: Screenshots and other artifacts (git-ignored).
ARTIFACTS_DIR: Path = REPO_ROOT / "test-artifacts"
#: Debian's chromium; override with ``PIKIT_CHROMIUM`` for other layouts.
CHROMIUM_PATH: str = os.environ.get("PIKIT_CHROMIUM", "/usr/bin/chromium")
#: Flags for a quiet, deterministic headless Chromium running as root in a container.
CHROMIUM_ARGS: list[str] = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

#: JupyterLab settings that silence the "news" popup and update checks.
LAB_QUIET_SETTINGS: dict[str, Any] = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
}

_IDLE_MARK = "| Idle"
_STATUS_BAR_JS = "(document.querySelector('#jp-main-statusbar') || {innerText: ''}).innerText"
_ANSI_RE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class HarnessError(RuntimeError):
    """The harness could not bring JupyterLab, the browser or the kernel to the expected state."""


class KernelExecError(HarnessError):
    """Code run through :func:`kernel_exec` raised in the kernel."""

    def __init__(self, ename: str, evalue: str, traceback: str, stdout: str) -> None:
        self.ename = ename
        self.evalue = evalue
        self.traceback = traceback
        self.stdout = stdout
        super().__init__(f"{ename}: {evalue}\n{traceback}")


# --------------------------------------------------------------------------------------------
# Environment checks
# --------------------------------------------------------------------------------------------


def ci_enabled() -> bool:
    """True when running in CI (``CI`` set to anything but empty/``0``/``false``/``no``)."""
    return os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}


def missing_browser_prerequisites(*, include_browser: bool = True) -> list[str]:
    """Describe what is missing to run browser tests (empty list = all present).

    With ``include_browser=False`` only the server side (JupyterLab, kernel, clients) is checked.
    """
    missing: list[str] = []
    checks = {
        "jupyterlab": "jupyterlab",
        "jupyter_client": "jupyter_client",
        "nbformat": "nbformat",
        "ipykernel": "ipykernel",
    }
    if include_browser:
        if not (os.path.isfile(CHROMIUM_PATH) and os.access(CHROMIUM_PATH, os.X_OK)):
            missing.append(f"chromium not found at {CHROMIUM_PATH} (run .ci/browser-setup.sh)")
        checks["playwright"] = "playwright.sync_api"
    for label, module in checks.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            missing.append(f"python package {label!r} is not installed")
    return missing


# --------------------------------------------------------------------------------------------
# JupyterLab server
# --------------------------------------------------------------------------------------------


def free_port(host: str = "127.0.0.1") -> int:
    """Ask the OS for a currently free TCP port on ``host``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@dataclass
class JupyterServer:
    """A running ``jupyter lab`` started by :func:`start_jupyter_server`.

    Attributes:
        url: Base URL without trailing slash, e.g. ``http://127.0.0.1:40123``.
        token: The auth token (also accepted as ``?token=`` in URLs).
        root_dir: The server's ``root_dir``; notebooks are written here.
        runtime_dir: ``JUPYTER_RUNTIME_DIR`` of the server (kernel connection files live here).
        log_path: File receiving the server's stdout and stderr.
        process: The server process.
    """

    url: str
    token: str
    root_dir: Path
    runtime_dir: Path
    log_path: Path
    process: subprocess.Popen[bytes]
    _log_file: IO[bytes] | None = field(default=None, repr=False)

    # -- HTTP -------------------------------------------------------------------------------

    def api(self, method: str, path: str, body: Any = None, timeout: float = 10.0) -> Any:
        """Call the server's REST API (``path`` like ``/api/sessions``) and return decoded JSON."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.url}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            payload = response.read()
        return json.loads(payload) if payload else None

    def lab_url(self, name: str, *, reset: bool = True) -> str:
        """URL opening ``name`` (path relative to ``root_dir``) in JupyterLab."""
        query = {"token": self.token}
        suffix = "&reset" if reset else ""
        return f"{self.url}/lab/tree/{urllib.parse.quote(name)}?{urllib.parse.urlencode(query)}{suffix}"

    def relative_path(self, notebook_path: str | os.PathLike[str]) -> str:
        """Normalise ``notebook_path`` (absolute or relative to ``root_dir``) to the API's form."""
        path = Path(notebook_path)
        if path.is_absolute():
            path = path.resolve().relative_to(self.root_dir.resolve())
        return path.as_posix()

    def kernel_id_for(self, notebook_path: str | os.PathLike[str], timeout: float = 30.0) -> str:
        """Return the id of the kernel the server's session for ``notebook_path`` uses.

        Polls ``/api/sessions`` (bounded by ``timeout``) because the browser creates the session
        asynchronously after opening the notebook.
        """
        wanted = self.relative_path(notebook_path)
        deadline = time.monotonic() + timeout
        seen: list[str] = []
        while True:
            sessions = self.api("GET", "/api/sessions")
            seen = [s.get("path", "") for s in sessions]
            for session in sessions:
                if session.get("path") == wanted and session.get("kernel"):
                    return str(session["kernel"]["id"])
            if time.monotonic() >= deadline:
                raise HarnessError(f"no kernel session for {wanted!r} after {timeout}s; sessions: {seen}")
            time.sleep(0.2)

    def connection_file(self, kernel_id: str) -> Path:
        """Path of the connection file the server wrote for ``kernel_id``."""
        return self.runtime_dir / f"kernel-{kernel_id}.json"

    # -- logs & lifecycle -------------------------------------------------------------------

    def log_tail(self, max_chars: int = 8000) -> str:
        """The last ``max_chars`` characters of the server log."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError as exc:
            return f"<cannot read {self.log_path}: {exc}>"
        return text[-max_chars:]

    def stop(self, timeout: float = 15.0) -> None:
        """Shut the server and its kernels down; escalate to SIGTERM/SIGKILL if needed. Idempotent."""
        if self.process.poll() is None:
            with contextlib.suppress(OSError, urllib.error.URLError, ValueError):
                # Graceful: the server shuts its kernels down, then exits.
                self.api("POST", "/api/shutdown", timeout=5.0)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _terminate(self.process)
        _kill_processes_mentioning(f"{self.runtime_dir}{os.sep}")  # stray kernels, if any
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None


def _terminate(process: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """SIGTERM then SIGKILL a process we started (its own process group, see start_new_session)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=timeout)
            return
        except subprocess.TimeoutExpired:
            continue


def _kill_processes_mentioning(marker: str, timeout: float = 5.0) -> None:
    """Kill processes whose command line contains ``marker`` (our private runtime dir).

    Kernels are started in their own session by jupyter_client, so they do not die with the
    server's process group; their command line carries ``-f <runtime_dir>/kernel-….json``, which
    is unique to this harness instance, so only kernels of *our* server match.
    """
    if not os.path.isdir("/proc"):
        return
    pids: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = (
                Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            )
        except OSError:
            continue
        if marker in cmdline:
            pids.append(int(entry))
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = []
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
                alive.append(pid)
        deadline = time.monotonic() + timeout
        while alive and time.monotonic() < deadline:
            alive = [pid for pid in alive if Path(f"/proc/{pid}").exists() and not _is_zombie(pid)]
            time.sleep(0.1)
        pids = alive
        if not pids:
            return


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return False


def _server_env(base: Path) -> dict[str, str]:
    """Environment isolating the server from the user's Jupyter/IPython configuration."""
    dirs = {
        "JUPYTER_RUNTIME_DIR": base / "runtime",
        "JUPYTER_CONFIG_DIR": base / "config",
        "JUPYTERLAB_SETTINGS_DIR": base / "lab-user-settings",
        "JUPYTERLAB_WORKSPACES_DIR": base / "lab-workspaces",
        "IPYTHONDIR": base / "ipython",
    }
    for directory in dirs.values():
        directory.mkdir(parents=True, exist_ok=True)
    # Silence the news popup / update check even if .ci/browser-setup.sh was not run:
    # jupyterlab_server layers <config dir>/labconfig/default_setting_overrides.json on top.
    labconfig = dirs["JUPYTER_CONFIG_DIR"] / "labconfig"
    labconfig.mkdir(exist_ok=True)
    (labconfig / "default_setting_overrides.json").write_text(json.dumps(LAB_QUIET_SETTINGS, indent=2))

    env = dict(os.environ)
    env.update({key: str(value) for key, value in dirs.items()})
    # Kernels inherit this: notebooks can `import pikit` from the checkout without installing it.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env.pop("JUPYTER_TOKEN", None)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def start_jupyter_server(
    base_dir: Path,
    *,
    startup_timeout: float = 60.0,
    attempts: int = 3,
    extra_args: Sequence[str] = (),
) -> JupyterServer:
    """Start ``jupyter lab`` on 127.0.0.1 with a free port and a random token.

    Args:
        base_dir: A fresh directory; ``root``, ``runtime``, config dirs and ``jupyter-server.log``
            are created inside it.
        startup_timeout: Seconds to wait for ``/api/status`` to answer, per attempt.
        attempts: Retries with a new port if the server dies early (e.g. the port was taken
            between choosing it and binding it).
        extra_args: Extra command line arguments for ``jupyter lab``.

    Returns:
        The running server; call :meth:`JupyterServer.stop` when done.

    Raises:
        HarnessError: The server did not become ready; the message includes the log tail.
    """
    base_dir.mkdir(parents=True, exist_ok=True)
    root_dir = base_dir / "root"
    root_dir.mkdir(exist_ok=True)
    env = _server_env(base_dir)
    log_path = base_dir / "jupyter-server.log"
    last_error = ""
    for attempt in range(1, attempts + 1):
        port = free_port()
        token = secrets.token_hex(24)
        command = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--allow-root",
            "--no-browser",
            "--ip=127.0.0.1",
            f"--port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root_dir}",
            "--LabApp.expose_app_in_browser=True",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            *extra_args,
        ]
        log_file = open(log_path, "ab")  # noqa: SIM115 - owned by JupyterServer, closed in stop()
        log_file.write(f"\n===== attempt {attempt}: {' '.join(command)}\n".encode())
        log_file.flush()
        process = subprocess.Popen(
            command,
            cwd=root_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # own process group: clean kill, no stray Ctrl-C prompt
        )
        server = JupyterServer(
            url=f"http://127.0.0.1:{port}",
            token=token,
            root_dir=root_dir,
            runtime_dir=Path(env["JUPYTER_RUNTIME_DIR"]),
            log_path=log_path,
            process=process,
            _log_file=log_file,
        )
        deadline = time.monotonic() + startup_timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                last_error = f"jupyter lab exited with code {process.returncode}"
                break
            try:
                server.api("GET", f"/api/status?token={token}", timeout=2.0)
                return server
            except (OSError, urllib.error.URLError, ValueError):
                time.sleep(0.2)
        else:
            last_error = f"jupyter lab did not answer /api/status within {startup_timeout}s"
        server.stop(timeout=5.0)
    raise HarnessError(f"{last_error}\n--- {log_path} (tail) ---\n{_read_tail(log_path)}")


def _read_tail(path: Path, max_chars: int = 8000) -> str:
    try:
        return path.read_text(errors="replace")[-max_chars:]
    except OSError as exc:
        return f"<cannot read {path}: {exc}>"


# --------------------------------------------------------------------------------------------
# Notebooks
# --------------------------------------------------------------------------------------------


def write_notebook(server: JupyterServer, name: str, cells: Iterable[str | tuple[str, str]]) -> Path:
    """Write a notebook into the server's root dir and return its path.

    Each item of ``cells`` is either code source, or a ``(cell_type, source)`` pair with
    ``cell_type`` one of ``"code"``, ``"markdown"``, ``"raw"``. The notebook gets the
    ``python3`` kernelspec in its metadata so JupyterLab starts the kernel without showing its
    "Select Kernel" dialog.
    """
    import nbformat

    makers = {
        "code": nbformat.v4.new_code_cell,
        "markdown": nbformat.v4.new_markdown_cell,
        "raw": nbformat.v4.new_raw_cell,
    }
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    for cell in cells:
        cell_type, source = ("code", cell) if isinstance(cell, str) else cell
        nb.cells.append(makers[cell_type](source))
    path = server.root_dir / name
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


# --------------------------------------------------------------------------------------------
# Browser helpers
# --------------------------------------------------------------------------------------------


def status_bar_text(page: Page) -> str:
    """The text of JupyterLab's status bar (e.g. ``'… Python 3 (ipykernel) | Idle …'``)."""
    return str(page.evaluate(f"() => {_STATUS_BAR_JS}"))


def wait_for_kernel_idle(page: Page, timeout: float = 60.0) -> None:
    """Wait until the status bar shows the kernel as ``| Idle``.

    The status bar, not the toolbar's execution indicator, is the reliable signal: the
    indicator reads idle before the kernel is connected, and a run-all sent then runs nothing.
    """
    try:
        page.wait_for_function(
            f"() => {_STATUS_BAR_JS}.includes({json.dumps(_IDLE_MARK)})", timeout=timeout * 1000
        )
    except Exception as exc:
        raise HarnessError(
            f"kernel not idle after {timeout}s; status bar: {status_bar_text(page)!r}"
        ) from exc


def open_notebook(page: Page, server: JupyterServer, name: str, timeout: float = 60.0) -> None:
    """Open ``name`` (relative to ``root_dir``) in a fresh JupyterLab workspace and wait for its kernel.

    Navigates to ``/lab/tree/NAME?token=…&reset`` (``reset`` drops any saved layout), waits for
    ``window.jupyterapp`` (``expose_app_in_browser``), the notebook panel, the server session,
    and the status bar's ``| Idle``.
    """
    if not (server.root_dir / name).is_file():
        raise HarnessError(f"{name!r} does not exist under the server's root_dir {server.root_dir}")
    page.goto(server.lab_url(name), wait_until="domcontentloaded", timeout=timeout * 1000)
    _wait_for_panel(page, timeout)
    server.kernel_id_for(name, timeout=timeout)
    try:
        wait_for_kernel_idle(page, timeout=timeout)
    except HarnessError:
        # A page on a loaded machine can miss its kernel's connection for good (the status bar reads
        # "| Unknown"); loading the page again connects it again, once.
        page.reload(wait_until="domcontentloaded", timeout=timeout * 1000)
        _wait_for_panel(page, timeout)
        wait_for_kernel_idle(page, timeout=timeout)


def _wait_for_panel(page: Page, timeout: float) -> None:
    page.wait_for_function("() => !!(window.jupyterapp && window.jupyterapp.shell)", timeout=timeout * 1000)
    page.locator(".jp-NotebookPanel").first.wait_for(state="visible", timeout=timeout * 1000)


_RUN_ALL_JS = """
async (timeoutMs) => {
  const app = window.jupyterapp;
  if (!app) { throw new Error('window.jupyterapp missing: start the server with expose_app_in_browser'); }
  let timer;
  const expired = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`run-all did not finish within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    const result = await Promise.race([app.commands.execute('notebook:run-all-cells'), expired]);
    return result === undefined ? null : result;
  } finally {
    clearTimeout(timer);
  }
}
"""

_NOTEBOOK_STATE_JS = """
() => {
  const panel = window.jupyterapp.shell.currentWidget;
  if (!panel || !panel.content || !panel.content.model) { return null; }
  const cells = panel.content.model.cells;
  const out = [];
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type !== 'code') { continue; }
    const errors = cell.outputs.toJSON().filter((o) => o.output_type === 'error');
    out.push({
      index: i,
      source: cell.sharedModel.getSource(),
      executionCount: cell.executionCount,
      errors: errors.map((e) => ({
        ename: e.ename, evalue: e.evalue, traceback: (e.traceback || []).join('\\n'),
      })),
    });
  }
  return out;
}
"""

_BUSY_PROMPTS_JS = (
    "() => Array.from(document.querySelectorAll('.jp-InputPrompt'))"
    ".filter((el) => el.innerText.includes('[*]')).length"
)


def run_all(page: Page, timeout: float = 120.0, *, raise_on_error: bool = True) -> None:
    """Run all cells of the current notebook and wait until execution has finished.

    Finished means: the ``notebook:run-all-cells`` command's promise settled (it resolves
    after every cell's execute reply), no ``[*]`` prompt is left, and the status bar reads
    ``| Idle``. Everything is bounded by ``timeout`` seconds.

    Args:
        page: A page on which :func:`open_notebook` has been called.
        timeout: Upper bound for the whole run, in seconds.
        raise_on_error: Raise :class:`HarnessError` when a cell raised (with the traceback),
            and when non-empty code cells were not executed at all.
    """
    deadline = time.monotonic() + timeout
    try:
        page.evaluate(_RUN_ALL_JS, int(timeout * 1000))
    except Exception as exc:
        raise HarnessError(f"run-all failed: {exc}; status bar: {status_bar_text(page)!r}") from exc

    def remaining_ms() -> float:
        return max(1.0, (deadline - time.monotonic()) * 1000)

    try:
        page.wait_for_function(
            f"() => ({_BUSY_PROMPTS_JS})() === 0 && {_STATUS_BAR_JS}.includes({json.dumps(_IDLE_MARK)})",
            timeout=remaining_ms(),
        )
    except Exception as exc:
        raise HarnessError(
            f"run-all did not finish within {timeout}s; status bar: {status_bar_text(page)!r}"
        ) from exc
    if not raise_on_error:
        return
    cells: list[dict[str, Any]] = page.evaluate(_NOTEBOOK_STATE_JS) or []
    for cell in cells:
        for error in cell["errors"]:
            traceback = _ANSI_RE.sub("", error["traceback"])
            raise HarnessError(
                f"cell {cell['index']} raised {error['ename']}: {error['evalue']}\n{traceback}"
            )
    not_run = [c["index"] for c in cells if c["source"].strip() and c["executionCount"] is None]
    if not_run:
        raise HarnessError(
            f"run-all finished but code cells {not_run} were never executed "
            f"(kernel not connected?); status bar: {status_bar_text(page)!r}"
        )


def open_file(page: Page, path: Path) -> tuple[list[str], list[str]]:
    """Open the local file ``path`` in ``page``; return (console errors and warnings, every request made)."""
    problems: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return problems, requests


def screenshot(page: Page, name: str, *, full_page: bool = False) -> Path:
    """Save a PNG of ``page`` as ``test-artifacts/NAME.png`` at the repository root; return the path."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "screenshot"
    if not safe.endswith(".png"):
        safe += ".png"
    ARTIFACTS_DIR.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS_DIR / safe
    page.screenshot(path=str(path), full_page=full_page)
    return path


# --------------------------------------------------------------------------------------------
# Kernel access
# --------------------------------------------------------------------------------------------


def kernel_exec(
    server: JupyterServer,
    notebook_path: str | os.PathLike[str],
    code: str,
    timeout: float = 30.0,
) -> str:
    """Run ``code`` in the kernel the notebook ``notebook_path`` uses in the browser; return stdout.

    The kernel is found through the server's ``/api/sessions`` (the session JupyterLab created
    for that path); a second client then connects straight to that kernel over ZMQ using the
    connection file the server wrote in its private ``runtime_dir``. Kernels accept any number
    of clients: the request queues behind whatever the browser is running, shares the same
    Python namespace, and any widget-state change it causes is broadcast on IOPub to the
    browser too. ``store_history=False`` keeps the notebook's execution counter untouched.

    Raises:
        KernelExecError: The code raised; carries ``ename``, ``evalue``, ``traceback``, ``stdout``.
        HarnessError: No session/connection file, or the kernel did not answer in ``timeout``.
    """
    from jupyter_client.blocking.client import BlockingKernelClient

    kernel_id = server.kernel_id_for(notebook_path, timeout=timeout)
    connection_file = server.connection_file(kernel_id)
    if not connection_file.exists():
        raise HarnessError(f"connection file {connection_file} for kernel {kernel_id} does not exist")

    stdout: list[str] = []
    stderr: list[str] = []
    errors: list[dict[str, Any]] = []

    def on_output(msg: dict[str, Any]) -> None:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            (stdout if content.get("name") == "stdout" else stderr).append(content.get("text", ""))
        elif kind == "error":
            errors.append(content)

    client = BlockingKernelClient(connection_file=str(connection_file))
    client.load_connection_file()
    client.start_channels()
    try:
        # Handshake: kernel_info until IOPub delivers too (avoids ZMQ's slow-joiner loss).
        client.wait_for_ready(timeout=timeout)
        reply = client.execute_interactive(
            code,
            silent=False,
            store_history=False,
            allow_stdin=False,
            output_hook=on_output,
            timeout=timeout,
        )
    except (TimeoutError, RuntimeError) as exc:
        raise HarnessError(f"kernel {kernel_id} for {notebook_path!s}: {exc}") from exc
    finally:
        client.stop_channels()

    content = reply["content"]
    if content.get("status") != "ok":
        error = errors[0] if errors else content
        traceback = _ANSI_RE.sub("", "\n".join(error.get("traceback", [])))
        if stderr:
            traceback += "\n--- stderr ---\n" + "".join(stderr)
        raise KernelExecError(
            str(error.get("ename", content.get("status"))),
            str(error.get("evalue", "")),
            traceback,
            "".join(stdout),
        )
    return "".join(stdout)


def wait_for_kernel_output(
    server: JupyterServer,
    notebook_path: str | os.PathLike[str],
    code: str,
    expected: str,
    timeout: float = 15.0,
    interval: float = 0.2,
) -> str:
    """Re-run ``code`` with :func:`kernel_exec` until its stripped stdout equals ``expected``.

    Browser events (a click) reach the kernel asynchronously, so assertions about Python state
    right after a Playwright action must poll. Returns the last stdout.

    Raises:
        AssertionError: ``expected`` was not seen within ``timeout`` seconds (shows the last value).
    """
    deadline = time.monotonic() + timeout
    while True:
        output = kernel_exec(server, notebook_path, code, timeout=max(timeout, 10.0))
        if output.strip() == expected:
            return output
        if time.monotonic() >= deadline:
            raise AssertionError(
                f"kernel printed {output.strip()!r}, expected {expected!r} within {timeout}s"
            )
        time.sleep(interval)
