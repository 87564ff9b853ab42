"""`traindoc db`, `feedback export`, `stats` and `rematch`: what the history database holds."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from bot.cli import common
from bot.cli.common import app, db_app, err, fail, feedback_app, open_store, out, since_epoch
from bot.settings import Settings


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Create or migrate the history database to the current schema (the app also does this at
    start-up)."""
    from bot.store import migrations

    store = open_store(Settings())
    engine = getattr(getattr(store, "history", store), "engine", None)
    if engine is None:
        fail("the configured store is not a SQL database", 1)
    out.print(
        f"database at revision {migrations.current(engine)} (head {migrations.head()})",
        markup=False,
        soft_wrap=True,
    )
    store.close()


@feedback_app.command("export")
def feedback_export(
    directory: Annotated[
        Path, typer.Argument(help="Where to write one eval case YAML per diagnosis.")
    ],
    helpful: Annotated[
        bool, typer.Option("--helpful", help="Also export answers users confirmed as helpful.")
    ] = False,
    since: Annotated[str, typer.Option(help="Only feedback this recent (e.g. 30d).")] = "3650d",
) -> None:
    """Write every corrected answer as an eval case (redacted text, the corrected entry as
    label)."""
    import yaml

    from bot.feedback import cases_from_feedback

    settings = Settings()
    kb = common.kb()
    store = open_store(settings)
    start = since_epoch(since)
    cases, missing = cases_from_feedback(
        store.diagnoses_since(0), store.feedback_since(start), set(kb.ids()), helpful=helpful
    )
    store.close()
    directory.mkdir(parents=True, exist_ok=True)
    written = 0
    for exported in cases:
        path = directory / f"feedback-{exported.diagnosis_id}.yaml"
        body = yaml.safe_dump(exported.case, sort_keys=False, allow_unicode=True, width=110)
        if not path.exists() or path.read_text(encoding="utf-8") != body:
            path.write_text(body, encoding="utf-8")
            written += 1
    out.print(
        f"{len(cases)} cases in {directory} ({written} new or changed)"
        + (f"; {missing} with feedback but no stored input" if missing else ""),
        markup=False,
        soft_wrap=True,
    )


@app.command()
def stats(
    since: Annotated[str, typer.Option(help="Only answers this recent (e.g. 30d, 12h).")] = "30d",
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    """Which failures keep coming back, whether the answers helped, and what needs work."""
    from bot.feedback import usage_stats

    kb = common.kb()
    store = open_store(Settings())
    start = since_epoch(since)
    figures = usage_stats(
        store.diagnoses_since(start),
        store.feedback_since(start),
        {e.id: e.category for e in kb.entries},
    )
    store.close()
    if as_json:
        sys.stdout.write(json.dumps(figures) + "\n")
        return
    from rich.table import Table

    out.print(
        f"{figures['diagnoses']} answers since {since} ago · "
        f"abstained {figures['abstention_rate']:.0%} · {figures['verdicts']}",
        markup=False,
        soft_wrap=True,
    )
    table = Table("entry", "answers", "👍", "👎", "helpful rate", title="Answers per entry")
    for entry_id, row in list(figures["entries"].items())[:25]:
        rate = row["helpful_rate"]
        table.add_row(
            entry_id,
            str(row["answers"]),
            str(row["helpful"]),
            str(row["wrong"]),
            "-" if rate is None else f"{rate:.0%}",
        )
    out.print(table)
    categories = Table("category", "answers", title="Answers per category")
    for category, count in figures["categories"].items():
        categories.add_row(category, str(count))
    out.print(categories)
    if figures["most_corrected"]:
        worst = Table(
            "entry",
            "👎",
            "corrected to",
            title="Most often corrected (the knowledge that needs work)",
        )
        for row in figures["most_corrected"]:
            worst.add_row(
                row["entry"],
                str(row["wrong"]),
                ", ".join(f"{k} ×{v}" for k, v in row["corrected_to"].items()),
            )
        out.print(worst)


@app.command()
def rematch(
    since: Annotated[str, typer.Option(help="Re-run answers this recent (e.g. 7d).")] = "7d",
    post: Annotated[
        bool, typer.Option("--post", help="Reply once in each Slack thread whose answer changed.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the changes as JSON.")] = False,
) -> None:
    """Re-diagnose stored (redacted) inputs against the current knowledge base; list what
    changed."""
    from bot.rematch import FOREVER_S, changed_answers, rematch_text

    settings = Settings()
    if post and settings.slack_bot_token is None:
        fail("--post needs SLACK_BOT_TOKEN", 1)
    store = open_store(settings)
    engine = common.engine(settings)
    changes = changed_answers(store.diagnoses_since(since_epoch(since)), engine.diagnose)
    titles = {e.id: e.title for e in engine.entries()}
    posted = 0
    if post:
        from slack_sdk import WebClient
        from slack_sdk.errors import SlackApiError

        token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else ""
        client = WebClient(token=token, base_url=settings.slack_api_url or WebClient.BASE_URL)
        for change in changes:
            if change.postable and store.claim(change.claim_key, FOREVER_S):
                try:
                    client.chat_postMessage(
                        channel=change.record.channel,
                        thread_ts=change.record.message_ts,
                        text=rematch_text(change, titles),
                    )
                    posted += 1
                except SlackApiError as exc:
                    err.print(
                        "traindoc: could not post "
                        f"to {change.record.channel}: {exc.response.get('error')}",
                        markup=False,
                        soft_wrap=True,
                    )
    store.close()
    if as_json:
        rows = [
            {
                "diagnosis": c.record.id,
                "channel": c.record.channel,
                "was": c.was,
                "now": c.now,
                "confidence": round(c.now_confidence, 4),
            }
            for c in changes
        ]
        sys.stdout.write(json.dumps({"changed": rows, "posted": posted}) + "\n")
        return
    for change in changes:
        out.print(
            f"{change.record.id}  {change.record.channel or '-':12} {change.was} -> {change.now} "
            f"({change.now_confidence:.2f})",
            markup=False,
            soft_wrap=True,
        )
    out.print(
        f"{len(changes)} answers changed" + (f"; posted {posted} thread replies" if post else ""),
        markup=False,
        soft_wrap=True,
    )
