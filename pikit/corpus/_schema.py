"""The corpus tables, declared as data: one (name, dtype, description) per column.

The same declarations make the DuckDB tables (``pikit.corpus._index``) and the pandas
DataFrames (``pikit.corpus._frames`` builds :class:`pikit.frames.Column` objects from
them), so both always have the same columns in the same order. This module imports
nothing heavy: the command line reads it without pandas.
"""

from __future__ import annotations

from .._columns import table
from ..compaction._factkinds import FACT_KINDS

__all__ = ["DUCKDB_TYPES", "TABLES"]


def _table(text: str) -> tuple[tuple[str, str, str], ...]:
    """(name, dtype, description) of each column of a text table (see ``pikit._columns.table``)."""
    return tuple((c.name, c.dtype, c.description) for c in table(text))


DUCKDB_TYPES = {"string": "VARCHAR", "Int64": "BIGINT", "Float64": "DOUBLE", "boolean": "BOOLEAN",
                "datetime64[ms, UTC]": "TIMESTAMPTZ"}

_USAGE = _table("""
    input_tokens        Int64    usage.input
    output_tokens       Int64    usage.output
    cache_read_tokens   Int64    usage.cacheRead (missing: 0)
    cache_write_tokens  Int64    usage.cacheWrite (missing: 0)
    total_tokens        Int64    usage.totalTokens, or the sum of the four when it is missing
    cost                Float64  usage.cost.total as recorded (missing: 0)
""")

TABLES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "sessions": (*_table("""
        session_id          string               the header's id
        path                string               the session file
        resume              string               the command that resumes the session: pi --session PATH (omp's
                                                   sessions: omp), the path quoted for a shell ($'…' for control
                                                   characters)
        store               string               where the file comes from: pi, omp, openclaw, else the agent directory
                                                   holding it (<NA> outside an agent directory's layout)
        project             string               the project: the header's cwd (the folder the file sits in when the
                                                   header has none)
        folder              string               the folder the file sits in (Pi's encoded cwd, --home-dev-shop-api--)
        cwd                 string               the header's cwd
        started             datetime64[ms, UTC]  the header's timestamp
        last_activity       datetime64[ms, UTC]  the latest entry timestamp
        parent_session      string               the header's parentSession: the file this one was forked or cloned from
        version             Int64                format version of the file (1 when the header has none)
        name                string               the session name (latest session_info; omp's: its title line)
        title               string               what Pi's session list calls it: the name, else the first user
                                                   request (after the file name when Pi did not name the file), one
                                                   line, cut at a word to 72 characters
        first_user_message  string               text of the first user message (shortened to 4,000 characters)
        size                Int64                file size in bytes when scanned
        mtime               datetime64[ms, UTC]  file modification time when scanned
        lines               Int64                complete lines read
        entries             Int64                entries (the header and damaged lines excluded)
        entry_types         string               entries by type, as JSON {type: count}
        messages            Int64                message entries
        user_messages       Int64                user messages
        assistant_messages  Int64                assistant messages
        models              string               models of the assistant messages, provider/model, comma-separated,
                                                   first use first
        providers           string               providers of the assistant messages, comma-separated
        leaf_id             string               the current leaf: the last entry in file order
        leaves              Int64                entries without children (branch tips)
        abandoned_branches  Int64                branch tips other than the current leaf
        compactions         Int64                compaction entries
    """), *_USAGE, *_table("""
        copied_cost    Float64  cost of messages copied here from another file (the usage columns above hold what
                                  counts of the file: a copy only where its original is not in the corpus)
        damaged_lines  Int64    lines skipped as damaged
        migrated_to    string   a version-1 file's migrated copy, where the corpus holds it (the same session, whose
                                  messages count there; pikit sessions lists the copy only)
    """)),
    "messages": (*_table("""
        session_id   string               the session (header id)
        path         string               the session file
        entry_id     string               the entry id (in a version-1 file, the one pikit's migration gives it)
        entry_index  Int64                position of the entry in the file (0 = first after the header)
        role         string               message role
        provider     string               provider (assistant messages)
        model        string               model id (assistant messages)
        timestamp    datetime64[ms, UTC]  the entry timestamp
    """), *_USAGE, *_table("""
        estimate          Int64    Pi's token estimate of the message (ceil(UTF-16 chars / 4))
        on_active_branch  boolean  whether the entry is on the path from the root to the current leaf
        countable         boolean  whether the usage is countable (the filters @ccusage/pi applies)
        counted           boolean  whether usage reports count this occurrence (the no-double-counting rule)
    """)),
    "compactions": _table("""
        session_id            string               the session
        path                  string               the session file
        entry_id              string               the compaction entry
        timestamp             datetime64[ms, UTC]  when it was written
        provider              string               provider of the last assistant message before it on its branch
        model                 string               model of that message
        tokens_before         Int64                tokensBefore: the context size when it fired
        tokens_after          Int64                the prompt of the first model call after it (input + cacheRead +
                                                     cacheWrite)
        first_kept_entry_id   string               firstKeptEntryId
        summary_chars         Int64                summary length in UTF-16 code units
        context_window        Int64                the model's context window, where the model is known
        reserve_tokens        Int64                reserveTokens from Pi's settings (global and project files, else the
                                                     default)
        threshold             Int64                context_window - reserve_tokens: Pi compacts above it
        over_threshold        Int64                tokens_before - threshold: by how much the context exceeded it
        summary_total_tokens  Int64                totalTokens of the summarization call, where recorded
        summary_cost          Float64              cost of the summarization call, where recorded
        copied                boolean              whether the entry was copied here from another file
    """),
    "branches": (*_table("""
        session_id          string               the session
        path                string               the session file
        leaf_id             string               the branch tip (or the current leaf)
        is_active           boolean              whether it is the current leaf
        abandoned           boolean              a tip that is not the current leaf
        length              Int64                entries from the root to the tip
        own_entries         Int64                entries not on the active branch (the whole path for the active one)
        fork_id             string               the last entry it shares with the active branch
        last_timestamp      datetime64[ms, UTC]  the tip's timestamp
        assistant_messages  Int64                assistant messages among its own entries
    """), *_USAGE),
    "summary_calls": (*_table("""
        session_id   string               the session
        path         string               the session file
        entry_id     string               the compaction or branch_summary entry
        entry_index  Int64                position of the entry in the file
        kind         string               compaction or branch_summary
        provider     string               provider of the last assistant message before it on its branch
        model        string               model of that message
        timestamp    datetime64[ms, UTC]  when it was written
    """), *_USAGE, *_table("""
        usage_key  string  identity of the call across files (timestamp and entry id)
    """)),
    "evaluations": (*_table("""
        session_id     string   the session
        path           string   the session file
        entry_id       string   the compaction entry (on any branch)
        strategy       string   pi, or pi (hook) for a summary a hook wrote (fromHook)
        model          string   provider/modelId of the branch at the compaction (the model that summarized)
        tokens_before  Int64    the recorded tokensBefore
        tokens_after   Int64    the context size right after the compaction (as pikit context measures it)
        tokens_saved   Int64    tokens_before - tokens_after
        compression    Float64  Pi's estimate of the context before / tokens_after (one unit)
        facts          Int64    facts of the replaced span (pikit evaluate's rules)
        kept           Int64    facts the context after it still holds
        key_facts      Int64    the key facts among them (what a follow-up agent needs)
        key_kept       Int64    key facts the context after it still holds
        key_recall     Float64  key_kept / key_facts, the headline (<NA> without key facts)
        recall         Float64  kept / facts (<NA> without facts)
    """), *_table("\n".join(f"    recall_{kind}  Float64  recall of the {kind} facts (<NA>: the span has none)"
                            for kind in FACT_KINDS))),
    "evaluation_facts": _table("""
        session_id  string   the session
        path        string   the session file
        entry_id    string   the compaction entry
        kind        string   task, decision, finding, progress, constraint, error, modified_file, read_file, command,
                               identifier, number or url
        importance  string   key (what a follow-up agent needs) or minor (a detail)
        text        string   the fact as extracted from the replaced span
        source      string   the entry it came from (an earlier compaction for what its summary held)
        kept        boolean  whether the context after the compaction still holds it
    """),
    "problems": _table("""
        path     string  the file
        line     Int64   line number (<NA>: the whole file)
        kind     string  damaged-line, unfinished-line, not-a-session, unreadable, vanished, extra-header,
                           unread-type (entries of a type not Pi's, one row per type, with their count)
        message  string  what went wrong
    """),
}
