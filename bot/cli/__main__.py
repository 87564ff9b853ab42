"""`python -m bot.cli` is the `traindoc` command."""

from bot.cli import main

main()
