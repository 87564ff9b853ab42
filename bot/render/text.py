"""Text helpers every renderer shares (no Slack or terminal specifics)."""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`\"'])")


def first_sentences(text: str, n: int = 2) -> str:
    """The first `n` sentences, whitespace folded: the why shown before the fix."""
    return " ".join(_SENTENCE_END.split(" ".join(text.split()))[:n])


_NO_NAME = ("<input>", "<stdin>", "<question>", "<paste>")


def location(file: str | None, line: int) -> str:
    """Where a line is, as the user would look it up: "rank7.log:16", or "line 16" for a paste."""
    if file and file not in _NO_NAME:
        return f"{file}:{line}"
    return f"line {line}"
# What a "bug in your code" answer advises (Slack and terminal alike).
USER_CODE_TIPS = (
    (
        "The innermost frame of the traceback is in your own file and the exception names no GPU, "
        "communication, memory or storage problem."
    ),
    (
        "Open that line, print the values it uses, and rerun on one process with a small input "
        "(`num_workers=0` makes DataLoader errors point straight at the dataset code)."
    ),
)
# ... and a script whose argument parser refused its command line.
USAGE_TIPS = (
    (
        "The script's argument parser refused its command line and exited before any training "
        "code ran; nothing about GPUs, communication, memory or storage is involved."
    ),
    "Compare the flags in the command with the usage line (or run the script with `-h`).",
)


def user_code_header(kind: str) -> str:
    if kind == "usage":
        return "Looks like a mistake in the command line"
    return "Looks like a bug in your code"


def user_code_tips(kind: str) -> tuple[str, ...]:
    return USAGE_TIPS if kind == "usage" else USER_CODE_TIPS
