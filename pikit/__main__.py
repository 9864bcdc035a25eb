"""``python -m pikit``: the command line."""

from .cli import run

run()
