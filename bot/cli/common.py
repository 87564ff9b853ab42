"""What every `traindoc` sub-command shares: the Typer apps, the one place errors become exit
codes, the consoles, and building the engine, the knowledge base and the history store."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from typer.core import TyperGroup

from bot.settings import Settings
from kb.errors import EXIT_INPUT, SetupError, TraindocError

if TYPE_CHECKING:
    from bot.diagnose import Engine
    from bot.model import Diagnosis
    from bot.store.base import Store
    from kb.load import KnowledgeBase


class RootCommand(TyperGroup):
    """The root command: the one place a TraindocError becomes a `traindoc: ...` line and its exit
    code."""

    def invoke(self, ctx: Any) -> Any:  # a click Context (typer vendors its own click)
        try:
            return super().invoke(ctx)
        except TraindocError as exc:
            fail(exc.explain(), exc.exit_code)


CONTEXT = {"help_option_names": ["-h", "--help"]}
app = typer.Typer(
    cls=RootCommand,
    add_completion=False,
    no_args_is_help=True,
    context_settings=CONTEXT,
    help="Diagnose ML training and inference failures.",
)
db_app = typer.Typer(
    no_args_is_help=True,
    context_settings=CONTEXT,
    help="The history database (SQLite or PostgreSQL).",
)
feedback_app = typer.Typer(
    no_args_is_help=True, context_settings=CONTEXT, help="Turn users' feedback into eval cases."
)
kb_app = typer.Typer(
    no_args_is_help=True, context_settings=CONTEXT, help="Inspect and check the knowledge base."
)
index_app = typer.Typer(
    no_args_is_help=True, context_settings=CONTEXT, help="Build the retrieval index."
)
app.add_typer(kb_app, name="kb")
app.add_typer(index_app, name="index")
app.add_typer(db_app, name="db")
app.add_typer(feedback_app, name="feedback")

out = Console()
err = Console(stderr=True)


def fail(message: str, code: int = EXIT_INPUT) -> NoReturn:
    err.print(f"traindoc: {message}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def engine(settings: Settings | None = None, kb: KnowledgeBase | None = None) -> Engine:
    from bot.diagnose import Engine

    progress = task = None

    def on_progress(done: int, total: int) -> None:
        nonlocal progress, task
        # rich.progress only when an index is built: a query does not pay its import
        if task is None:
            from rich.progress import Progress

            progress = Progress(transient=True, console=err)
            progress.start()
            task = progress.add_task("building the index", total=total)
        progress.update(task, completed=done)
        if done >= total:
            progress.stop()

    return Engine.from_settings(settings or Settings(), kb=kb, progress=on_progress)


def kb() -> KnowledgeBase:
    return Settings().load_kb()


def emit(diagnosis: Diagnosis, as_json: bool, *, with_table: bool = False) -> None:
    if as_json:
        sys.stdout.write(json.dumps(diagnosis.to_json(), ensure_ascii=False) + "\n")
        return
    from bot.render.terminal import render

    out.print(render(diagnosis))
    if with_table and diagnosis.triage is not None and diagnosis.triage.ranks_seen > 1:
        from bot.render.rank_table import rank_table

        out.print(rank_table(diagnosis.triage))


def version_callback(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"traindoc {version('traindoc')}")
        except PackageNotFoundError:
            typer.echo("traindoc (not installed as a package)")
        raise typer.Exit()


@app.callback()
def _main(
    _: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=version_callback,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """Diagnose ML training and inference failures."""


_UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def since_epoch(value: str) -> float:
    """'30d', '12h', '90m', '2w' before now, as epoch seconds."""
    import re
    import time

    match = re.fullmatch(r"\s*(\d+)\s*([mhdw])\s*", value)
    if not match:
        fail(f"--since {value!r}: say how long ago, e.g. 7d, 12h, 90m or 2w")
    return time.time() - int(match.group(1)) * _UNITS[match.group(2)]


def open_store(settings: Settings) -> Store:
    from bot.store import store_from_settings

    try:
        return store_from_settings(settings)
    except Exception as exc:  # noqa: BLE001 - any database error is a setup problem, said in one line
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise SetupError(
            f"cannot open the history database: {type(exc).__name__}: {first}"
        ) from None
