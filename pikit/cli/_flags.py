"""The command line's flags for the library's parameters, in one place.

A library error that names a parameter does so as a Python caller writes it (``speed must be
more than 0``, ``pass overwrite=True to replace it``) and keeps it apart
(:class:`pikit.errors.Wording`); the command line says the same with the flag that sets that
parameter (``--speed must be more than 0``, ``pass --force to replace it``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from .._inert import cut_echoes
from ..errors import PikitError

__all__ = ["FLAGS", "error_line", "in_flags"]

#: Each parameter a library error may name, with the flag the command line sets it by.
FLAGS: Mapping[str, str] = MappingProxyType({
    "agent_dir": "--agent-dir",  # Corpus.open(agent_dir=...), model_catalog(agent_dir=...)
    "allow": "--redact-allow-pattern",  # Redactor(allow=[re.compile(...)])
    "auto_compact_limit": "--auto-compact-limit",  # compaction.simulate(auto_compact_limit=...)
    "by": "--by",                # Corpus.usage(by=...)
    "compaction": "--compaction",  # evaluate(session, compaction=...)
    "force": "--force",          # replay(force=True)
    "index": "--index",          # Corpus.open(index=...)
    "keep_turns": "--keep-turns",  # compaction.simulate(keep_turns=...)
    "kinds": "--in",             # Corpus.search(kinds=...)
    "keep_observations": "--keep-observations",  # compaction.simulate(keep_observations=...)
    "last": "--last",            # Corpus.usage_rows(last=...)
    "limit": "--limit",          # Corpus.search(limit=...)
    "max_gap": "--max-gap",      # replay(max_gap=...)
    "offset": "--offset",        # Corpus.search(offset=...)
    "output": "-o OUT",          # write_entry(output=...)
    "overwrite": "--force",      # the writers' overwrite=True
    "patterns": "--redact-pattern",  # Redactor(patterns=[...])
    "probe_model": "--probes",   # probe_client(model=...)
    "query": "QUERY",            # Corpus.search(query)
    "root": "DIR",               # Corpus.open(root=...)
    "since": "--since",          # Corpus.usage_rows(since=...)
    "speed": "--speed",          # replay(speed=...)
    "strategy": "--strategy",    # compaction.simulate(strategy=...)
    "threshold": "--threshold",  # compaction.simulate(threshold=...)
})


def in_flags(error: PikitError) -> str:
    """The message of ``error`` with the command line's flags for the parameters it names."""
    return error.worded(FLAGS)


def error_line(program: str, error: PikitError, argv: Sequence[str]) -> str:
    """The one line a program prints for ``error``: in flags, the user's values in ``argv`` echoed shortened."""
    return f"{program}: error: {cut_echoes(in_flags(error), argv)}"
