"""Evidence as the user looks it up: file and line in that file, the matched part always shown, and
progress only on an interactive terminal."""

from __future__ import annotations

import io

from rich.console import Console

from bot.model import FingerprintHit, Initiating, Triage
from bot.render.answer_view import triage_line
from bot.render.progress import MIN_BYTES, busy, input_progress
from bot.render.text import location


def test_location_names_the_file_unless_it_was_a_paste():
    assert location("logs/node02/rank7.log", 16) == "logs/node02/rank7.log:16"
    assert location("<stdin>", 16) == "line 16"
    assert location(None, 3) == "line 3"


def test_an_excerpt_keeps_the_matched_part_of_a_long_line():
    text = "x" * 250 + " CUDA out of memory. Tried to allocate" + "y" * 10
    hit = FingerprintHit(pattern="CUDA out of memory", line=4, text=text, span=(251, 269), file="rank3.log")
    assert "CUDA out of memory" in hit.excerpt(60)
    assert len(hit.excerpt(60)) <= 60


def test_the_triage_line_says_where_the_first_error_is():
    triage = Triage(initiating=Initiating(rank=5, node="node02", line=224, text="OOM", file="rank5.log", kind="oom"),
                    summary="rank 5 on node02 ran out of GPU memory first")
    assert triage_line(triage).endswith("first error at rank5.log:224")


def test_progress_is_drawn_only_on_a_terminal_and_only_for_big_inputs():
    for terminal, size, drawn in ((True, MIN_BYTES, True), (False, MIN_BYTES, False), (True, MIN_BYTES - 1, False)):
        out = io.StringIO()
        console = Console(file=out, force_terminal=terminal, width=100)
        with input_progress(console, size) as bar:
            bar.advance(size)
        with busy(console, size, "diagnosing"):
            pass
        assert bool(out.getvalue()) is drawn, (terminal, size)
