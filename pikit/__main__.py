"""``python -m pikit``: the command line."""

from .cli import main

raise SystemExit(main())
