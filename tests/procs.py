"""Running ``pikit`` as a real process, with a time limit, for the hardening tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def env(**extra: str) -> dict[str, str]:
    """The environment of a child ``pikit``: this checkout first on the path, no colour, UTF-8."""
    out = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    out["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
    out["PYTHONIOENCODING"] = "utf-8"
    out.update(extra)
    return out


def ctrl_c_reaches_it() -> None:
    """``preexec_fn`` of a child that a test sends Ctrl-C (SIGINT): the signal's default action, as for a
    terminal's foreground job, whatever the test run inherited.

    A test run started in the background by a non-interactive shell (``pytest … &``) ignores SIGINT, its
    children inherit that, and Python then installs no ``KeyboardInterrupt`` handler: the signal would do
    nothing and the test would wait for a process that never ends.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def pikit(*argv: str | os.PathLike[str], timeout: float = 60, extra_env: dict[str, str] | None = None,
          **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
    """Run ``python -m pikit ARGV`` to completion (``subprocess.TimeoutExpired`` past ``timeout``)."""
    return subprocess.run([sys.executable, "-m", "pikit", *map(str, argv)], capture_output=True, timeout=timeout,
                          env=env(**(extra_env or {})), **kwargs)


def in_agent(agent: Path, *argv: str | os.PathLike[str], timeout: float = 120) -> tuple[int, str, str]:
    """Run ``python -m pikit ARGV`` in the agent folder ``agent`` (also its ``PI_CODING_AGENT_DIR``):
    (exit code, stdout, stderr)."""
    done = pikit(*argv, timeout=timeout, extra_env={"PI_CODING_AGENT_DIR": str(agent)}, cwd=agent)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def popen(*argv: str | os.PathLike[str], extra_env: dict[str, str] | None = None,
          **kwargs: Any) -> subprocess.Popen[bytes]:
    """Start ``python -m pikit ARGV`` without waiting."""
    return subprocess.Popen([sys.executable, "-m", "pikit", *map(str, argv)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env(**(extra_env or {})), **kwargs)


def one_error_line(proc: subprocess.CompletedProcess[bytes], *needles: str) -> str:
    """The single error line of a failed run (no traceback; warnings and notes may come
    before it), checked to hold every needle."""
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode not in (0, None), err
    assert "Traceback" not in err, err
    lines = [line for line in err.strip().splitlines() if not line.startswith(("pikit: warning:", "pikit: note:"))]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def on_a_terminal(*argv: str | os.PathLike[str], stream: str = "stdout", environment: dict[str, str] | None = None,
                  timeout: float = 300) -> tuple[subprocess.CompletedProcess[bytes], bytes]:
    """Run ``python -m pikit ARGV`` with ``stream`` (``"stdout"`` or ``"stderr"``) on a pseudo-terminal and the
    other one piped: the finished process and what the terminal received."""
    import pty
    import threading

    leader, follower = pty.openpty()
    screen: list[bytes] = []

    def drain() -> None:  # a terminal's buffer is small: read while the command writes
        try:
            while chunk := os.read(leader, 65536):
                screen.append(chunk)
        except OSError:
            pass

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, stream: follower}
    try:
        done = subprocess.run([sys.executable, "-m", "pikit", *map(str, argv)], **streams,
                              env=environment if environment is not None else env(), timeout=timeout, check=False)
    finally:
        os.close(follower)
    reader.join(10)
    os.close(leader)
    return done, b"".join(screen)
