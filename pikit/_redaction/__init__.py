"""Redaction: a session with its secrets replaced by stable placeholders (see :mod:`.session`)."""
