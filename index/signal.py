"""Does the input say that anything went wrong, and how loudly? Line-level reading of log levels.

RE2 throughout: one linear pass over a 50 MB log, where Python's re needs minutes for these
alternations. Only lines that contain a word of trouble are looked at closely.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import re2

# Words of trouble, and informational log levels whose lines never count as trouble (NCCL's INFO
# "NET/Plugin: Failed to find ncclNetPlugin" is printed by every healthy run without a plugin).
_TROUBLE = re2.compile(
    r"(?i)(?:error|exception)\b|\b(?:errno|traceback|fail(?:ed|ure|s|ing)?|fatal|abort(?:ed|ing)?|"
    r"timed out|timeout|"
    r"killed|sig(?:kill|term|segv|abrt|bus)|segmentation fault|core dumped|out of memory|oom|xid|"
    r"nan|illegal|"
    r"denied|refused|corrupt(?:ed)?|hangs?|hanging|hung|stuck|deadlock|crash(?:ed|es)?|panic|exit "
    r"?code|"
    r"exitcode|cannot|can't|unable|not found|no such|invalid|mismatch|unsupported|not supported|"
    r"exceeds?)\b"
)
# traindoc's own notes in the input ("[traindoc skipped N bytes ...]") are not the log's.
_INFO_LINE = re2.compile(r"\b(?:INFO|DEBUG|TRACE)\b|\[[IVD]\d{4} |^\s*[IVD]\d{4} |^\[traindoc[ :]")
# A counter of trouble that reads zero ("number of nan iterations:   0 |", "errors=0") says all
# is well; Megatron prints one on every iteration line of a healthy run.
_ZERO_COUNT = re2.compile(
    r"(?i)\b(?:nan|inf|fail\w*|errors?|exceptions?|timeouts?|ooms?|invalid)\b[\w ]{0,40}?[:=] *0"
    r"(?:\.0+)?(?:\s|$|[|,;)\]}])"
)

# A warning says the program went on. The forms: Python's warnings module
# ("path.py:N: UserWarning: ..."), the logging level WARNING (vLLM, DeepSpeed, HF, root logger),
# torch's C++ TORCH_WARN through glog ("[W1203 10:00:00.1 ...]", older "[W socket.cpp:663]"),
# glog W lines (Ray, XLA) and TensorFlow's ": W tensorflow/...cc:55]". Not NCCL's "NCCL WARN":
# NCCL prints its errors at that level.
_PY_WARNING_TEXT = r"\.py:\d+: [A-Z]\w*Warning: "
_PY_WARNING = re2.compile(_PY_WARNING_TEXT)
_WARNING_LINE = re2.compile(
    r"(?m)" + _PY_WARNING_TEXT + r"|\bWARNING\b|\[W\d{4} |\[W [\w.]+:\d+\]|^\s*W\d{4} "
    r"|\d: W [\w/.-]+\.(?:cc|h):\d+\]"
)


def _lines_with_trouble(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each non-informational line that speaks of trouble."""
    position = 0
    while (match := _TROUBLE.search(text, position)) is not None:
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        end = len(text) if end == -1 else end
        line = text[start:end]
        if not _INFO_LINE.search(line) and not _only_zero_counts(line):
            yield start, end
        position = end + 1  # the rest of a line is judged with the line


def _only_zero_counts(line: str) -> bool:
    return bool(_ZERO_COUNT.search(line)) and not _TROUBLE.search(_ZERO_COUNT.sub(" ", line))


def error_signal(text: str) -> float:
    """1.0 when some non-informational line of `text` speaks of trouble, else 0.0."""
    return 1.0 if next(_lines_with_trouble(text), None) is not None else 0.0


def only_warnings(text: str) -> bool:
    """True when `text` has warnings and nothing worse: every line that speaks of trouble is a
    warning, or the indented source line Python's warnings module prints under one."""
    if not _WARNING_LINE.search(text):
        return False
    for start, end in _lines_with_trouble(text):
        if _WARNING_LINE.search(text[start:end]):
            continue
        if not _continues_warning(text, start):
            return False
    return True


def _continues_warning(text: str, start: int) -> bool:
    """An indented line right under a Python warning (`warnings.warn(` or the calling line)."""
    if start == 0 or text[start : start + 1] not in (" ", "\t"):
        return False
    previous = text.rfind("\n", 0, start - 1) + 1
    return bool(_WARNING_LINE.search(text[previous : start - 1]))


_TRACEBACK = "Traceback (most recent call last):"


def with_attached_tracebacks(texts: Sequence[str], lines: frozenset[int]) -> frozenset[int]:
    """The given 1-based lines (numbered across the texts joined by newlines) plus, for each logged
    message, the Python traceback printed right under it: a logger called with exc_info=True
    (xformers' "A matching Triton is not available") prints the caught exception's traceback after
    its message, and that exception is part of the same harmless notice, not an error of its own.
    A warnings-module line ("x.py:3: UserWarning: ...") has no traceback of its own.
    Only the tracebacks' own positions are visited: no pass over every line of a long log."""
    if not lines:
        return lines
    out = set(lines)
    base = 0
    for text in texts:
        position = counted = 0
        line = 1  # of `position`, within this text
        while (start := text.find(_TRACEBACK, position)) != -1:
            line += text.count("\n", counted, start)
            counted = position = start
            if start > 0 and text[start - 1] == "\n" and base + line - 1 in lines:
                previous = text[text.rfind("\n", 0, start - 1) + 1 : start - 1]
                if not _PY_WARNING.search(previous):
                    out.update(base + k for k in _traceback_rows(text, start, line))
            position = start + len(_TRACEBACK)
        base += text.count("\n", counted) + line
    return frozenset(out)


def _traceback_rows(text: str, start: int, line: int) -> range:
    """Line numbers of the traceback whose header is at `start` (line `line`), through its
    exception line (the first unindented line after the header); empty if it never ends."""
    end = text.find("\n", start)
    for k in range(1, 200):
        if end == -1:
            return range(0)
        row_end = text.find("\n", end + 1)
        row = text[end + 1 : len(text) if row_end == -1 else row_end]
        if row and not row[0].isspace():
            return range(line, line + k + 1)
        end = row_end
    return range(0)
