"""`traindoc ask` and `traindoc diagnose`: one answer for a question or for log files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from bot.cli import common
from bot.cli.common import app, emit, err, fail
from bot.ingest import report_from_bytes
from kb.errors import IngestError


@app.command()
def ask(
    question: Annotated[
        str, typer.Argument(help="A question in plain words, or a pasted error line.")
    ],
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print one JSON object (the stable contract in docs/json.md)."),
    ] = False,
) -> None:
    """Answer a question from the failure encyclopedia."""
    from bot.ingest import build_report, normalize
    from bot.model import LogFile

    text = normalize(question)
    if not text.strip():
        fail(
            "empty question: say what failed, e.g. "
            'traindoc ask "why does dcp.save hang at 64 GPUs?"'
        )
    report = build_report([LogFile(name="<question>", text=text)])
    emit(common.engine().diagnose(report), as_json)


@app.command()
def diagnose(
    files: Annotated[
        list[str], typer.Argument(help="Log files (plain or .gz), or - for standard input.")
    ],
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print one JSON object (the stable contract in docs/json.md)."),
    ] = False,
) -> None:
    """Diagnose one or more log files (one per rank or node is fine)."""
    from bot.bounded import iter_file, iter_path
    from bot.ingest import build_report, normalize, read_text
    from bot.model import LogFile
    from bot.render.progress import busy, input_progress

    sizes: list[int] = []
    for name in files:
        if name == "-":
            sizes.append(0)
            continue
        path = Path(name)
        if not path.is_file():
            fail(f"{name}: no such file")
        sizes.append(path.stat().st_size)
    logs: list[LogFile] = []
    empty: list[tuple[str, bytes]] = []
    # One file at a time, streamed within the byte budget (head and tail kept, gzip inflated as a
    # stream); a file that cannot be read (binary among many rank logs, say) is named.
    with input_progress(err, sum(sizes)) as progress:
        for name, size in zip(files, sizes, strict=True):
            shown = "<stdin>" if name == "-" else name  # as typed: a directory may name the node
            chunks = iter_file(sys.stdin.buffer) if name == "-" else iter_path(Path(name))
            try:
                text = normalize(read_text(chunks, name=shown))
            except IngestError as exc:  # name the file among many
                raise IngestError(f"{name}: {exc}") from None
            except OSError as exc:
                fail(f"{name}: {exc.strerror}")
            if not text.strip():
                empty.append((shown, b""))
                continue
            logs.append(LogFile(name=shown, text=text))
            progress.advance(size)
    report = build_report(logs) if logs else report_from_bytes(empty)
    engine = common.engine()
    with busy(err, sum(sizes), "diagnosing"):
        diagnosis = engine.diagnose(report)
    emit(diagnosis, as_json, with_table=True)
