"""The /traindoc slash command: an ephemeral answer with a "Share in channel" button.

`/traindoc <entry-id>` shows that entry; `/traindoc help` (or nothing) shows usage; anything else
is diagnosed as a log or a question.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.ingest import report_from_text
from bot.render import blocks as render
from bot.slack.deps import Deps, log_failure
from bot.slack.records import record_answer
from kb.errors import InputError

COMMAND = "/traindoc"
MAX_QUERY_CHARS = 20_000


def make_command_listener(deps: Deps) -> Callable[..., None]:
    def on_command(
        ack: Callable[..., None], command: dict[str, Any], respond: Callable[..., Any]
    ) -> None:
        ack()
        query = (command.get("text") or "").strip()
        try:
            message, share = answer_query(deps, query, command)
        except InputError as exc:
            respond(response_type="ephemeral", **render.render_help(str(exc)).kwargs())
            return
        except Exception:  # noqa: BLE001 - the user must always get an answer
            log_failure("slash command from %s failed", command.get("user_id"))
            respond(
                response_type="ephemeral",
                **render.render_error("Sorry, I couldn't analyse this.").kwargs(),
            )
            return
        if share is not None:
            message = render.with_share_button(message, share)
        respond(response_type="ephemeral", **message.kwargs())

    return on_command


def answer_query(
    deps: Deps, query: str, where: dict[str, Any]
) -> tuple[render.Message, dict[str, Any] | None]:
    """The message for a query and the share button's value (None: nothing worth sharing)."""
    if not query or query.lower() in ("help", "?"):
        return render.render_help(), None
    entry = deps.entry(query) if " " not in query else None
    if entry is not None:
        return render.render_entry(entry, titles=deps.titles()), {"entry": entry.id}
    report = report_from_text(query[:MAX_QUERY_CHARS], origin="slack:command", slack=True)
    diagnosis = deps.diagnose(report)
    record = record_answer(
        deps,
        diagnosis,
        team_id=where.get("team_id", ""),
        channel=where.get("channel_id", ""),
        user=where.get("user_id", ""),
        origin="command",
        query=report.text,
    )
    deps.metrics.answers.labels(surface="command", verdict=diagnosis.verdict).inc()
    return render.render_diagnosis(diagnosis, ref=record.id, titles=deps.titles()), {
        "ref": record.id
    }
