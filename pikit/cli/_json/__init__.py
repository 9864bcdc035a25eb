"""The ``--json`` contract of the ``pikit`` command, one module per command family.

Each module builds, from the library's objects, the exact objects a command prints with
``--json`` (written through :mod:`pikit.jsjson`, byte for byte as JavaScript's
``JSON.stringify`` writes them); the library's objects carry no JSON of their own.
``docs/json.md`` documents every shape.

- :mod:`.context`: ``pikit context``;
- :mod:`.diff`: ``pikit diff`` and ``pikit show``;
- :mod:`.tree`: ``pikit tree`` and ``pikit info``;
- :mod:`.compaction`: ``pikit compact`` (``--dry-run`` and a real one), ``pikit branch-summary``
  (likewise), ``pikit simulate`` and ``pikit settings``;
- :mod:`.evaluation`: ``pikit evaluate``;
- :mod:`.watch`: the lines of ``pikit watch``;
- :mod:`.models`: ``pikit models``;
- :mod:`.corpus`: ``pikit sessions``, ``pikit usage`` and ``pikit problems``;
- :mod:`.search`: ``pikit search``.
"""
