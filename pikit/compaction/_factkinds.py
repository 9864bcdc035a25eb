"""The kinds of fact an evaluation extracts, apart from how it extracts them (the corpus tables are declared with
them and import nothing else of the evaluation)."""

from __future__ import annotations

__all__ = ["FACT_KINDS"]

FACT_KINDS = ("task", "decision", "finding", "progress", "constraint", "error", "modified_file", "read_file",
              "command", "identifier", "number", "url")
"""The kinds of fact, in the order reports list them."""
