"""Progress on the terminal for big inputs: a byte bar while files are read and cleaned, a spinner
while they are diagnosed. Only on an interactive stderr and only past a few MB, so pipes, --json
output and small pastes see nothing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TransferSpeedColumn,
)

MIN_BYTES = 4 << 20  # below this the answer comes before a bar would be worth drawing


class _Bar:
    def __init__(self, progress: Progress | None, task: int | None):
        self._progress, self._task = progress, task

    def advance(self, nbytes: int) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.advance(TaskID(self._task), nbytes)


def shown(console: Console, total_bytes: int) -> bool:
    return console.is_terminal and total_bytes >= MIN_BYTES


@contextmanager
def input_progress(console: Console, total_bytes: int) -> Iterator[_Bar]:
    """A bar over the input bytes (`advance` as each file is read and cleaned)."""
    if not shown(console, total_bytes):
        yield _Bar(None, None)
        return
    columns = (SpinnerColumn(), TextColumn("reading and cleaning"), BarColumn(), DownloadColumn(),
               TransferSpeedColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        yield _Bar(progress, progress.add_task("read", total=total_bytes))


@contextmanager
def busy(console: Console, total_bytes: int, what: str) -> Iterator[None]:
    """A spinner with elapsed time for a step whose progress is not measured."""
    if not shown(console, total_bytes):
        yield
        return
    with Progress(
        SpinnerColumn(), TextColumn(what), TimeElapsedColumn(), console=console, transient=True
    ) as progress:
        progress.add_task(what, total=None)
        yield
