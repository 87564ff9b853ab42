"""The `traindoc` command: ask, diagnose, eval, kb lint/list/show/stats/new, index build, calibrate,
db, feedback, stats, rematch, serve. One module per group of sub-commands; bot.cli.common holds
the apps and what they share."""

from __future__ import annotations

# importing a module registers its sub-commands, in the order `traindoc --help` lists them
# isort: off
from bot.cli import answer, quality, knowledge, history, serve  # noqa: F401
# isort: on
from bot.cli.common import app

__all__ = ["app", "main"]


def main() -> None:
    app()
