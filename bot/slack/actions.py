"""Buttons and the feedback modal: 👍 / 👎, "Why this match", siblings, entries, "Share in channel".

Every listener acks at once (Slack's 3-second rule), then answers ephemerally via response_url.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.ingest import report_from_text
from bot.redact import redact
from bot.render import blocks as render
from bot.slack.commands import answer_query
from bot.slack.deps import Deps, log
from bot.slack.records import record_answer
from bot.store.base import NONE_OF_THESE, Feedback

Ack = Callable[..., None]
Respond = Callable[..., Any]
MAX_FREE_TEXT = 300


def parse_value(action: dict[str, Any]) -> dict[str, Any]:
    try:
        value = json.loads(action.get("value") or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _where(body: dict[str, Any]) -> dict[str, str]:
    return {
        "team_id": (body.get("team") or {}).get("id", ""),
        "channel_id": (body.get("channel") or {}).get("id", ""),
        "user_id": (body.get("user") or {}).get("id", ""),
    }


def _ephemeral(respond: Respond, message: render.Message) -> None:
    respond(response_type="ephemeral", replace_original=False, **message.kwargs())


def make_helpful_listener(deps: Deps) -> Callable[..., None]:
    def on_helpful(
        ack: Ack, body: dict[str, Any], action: dict[str, Any], respond: Respond
    ) -> None:
        ack()
        value, where = parse_value(action), _where(body)
        deps.store.add_feedback(
            Feedback(
                diagnosis_id=value.get("ref", ""),
                team_id=where["team_id"],
                user=where["user_id"],
                channel=where["channel_id"],
                helpful=True,
                predicted_id=value.get("entry", ""),
            )
        )
        _ephemeral(respond, render.Message(text="Thanks! Noted that this answer helped."))

    return on_helpful


def make_wrong_listener(deps: Deps) -> Callable[..., None]:
    """👎 opens a modal: pick the right entry among the top five, or type one."""

    def on_wrong(ack: Ack, body: dict[str, Any], action: dict[str, Any], client: WebClient) -> None:
        ack()
        value, where = parse_value(action), _where(body)
        top = [(i, e.title) for i in value.get("top", [])[:5] if (e := deps.entry(i)) is not None]
        metadata = json.dumps(
            {"ref": value.get("ref", ""), "entry": value.get("entry", ""), **where}
        )
        client.views_open(
            trigger_id=body["trigger_id"], view=render.render_feedback_modal(top, metadata)
        )

    return on_wrong


def _selected(values: dict[str, Any], block: str, action: str = "value") -> str:
    element = (values.get(block) or {}).get(action) or {}
    return (
        (element.get("selected_option") or {}).get("value") or element.get("value") or ""
    ).strip()


def make_feedback_submission_listener(deps: Deps) -> Callable[..., None]:
    """The 👎 modal's answer: a candidate, a searched entry, an id typed, or none of these
    (with words)."""

    def on_submit(ack: Ack, body: dict[str, Any], view: dict[str, Any]) -> None:
        values = (view.get("state") or {}).get("values") or {}
        typed = _selected(values, render.BLOCK_TYPED)
        correct = _selected(values, render.BLOCK_PICK) or _selected(
            values, render.BLOCK_SEARCH, render.ACTION_SEARCH_ENTRY
        )
        note = redact(typed)[:MAX_FREE_TEXT]
        if not correct and typed:
            entry = deps.entry(typed)
            correct, note = (entry.id, "") if entry else (NONE_OF_THESE, note)
        if not correct:
            ack(
                response_action="errors",
                errors={render.BLOCK_TYPED: "Pick an entry above, or say what it really was here."},
            )
            return
        ack()
        try:
            meta = json.loads(view.get("private_metadata") or "{}")
        except json.JSONDecodeError:
            meta = {}
        deps.store.add_feedback(
            Feedback(
                diagnosis_id=meta.get("ref", ""),
                team_id=meta.get("team_id", ""),
                user=(body.get("user") or {}).get("id", ""),
                channel=meta.get("channel_id", ""),
                helpful=False,
                predicted_id=meta.get("entry", ""),
                correct_id=correct,
                note=note,
            )
        )
        log.info("feedback: %s should have been %s", meta.get("entry"), correct)

    return on_submit


def make_entry_search_listener(deps: Deps) -> Callable[..., None]:
    """Options for the modal's search box (Slack sends what the user typed, at least
    MIN_SEARCH_CHARS)."""

    def on_options(ack: Ack, payload: dict[str, Any]) -> None:
        ack(
            options=render.render_entry_options(
                deps.engine.entries(), str(payload.get("value") or "")
            )
        )

    return on_options


def make_why_listener(deps: Deps) -> Callable[..., None]:
    def on_why(ack: Ack, action: dict[str, Any], respond: Respond) -> None:
        ack()
        value = parse_value(action)
        record = deps.store.get_diagnosis(value.get("ref", ""))
        payload = record.payload if record else {}
        _ephemeral(respond, render.render_why(payload, value.get("entry", "")))

    return on_why


def make_siblings_listener(deps: Deps) -> Callable[..., None]:
    def on_siblings(ack: Ack, action: dict[str, Any], respond: Respond) -> None:
        ack()
        entry = deps.entry(action.get("value") or "")
        if entry is None:
            _ephemeral(
                respond, render.render_error("That entry is no longer in the knowledge base.")
            )
            return
        siblings = [s for i in entry.siblings if (s := deps.entry(i)) is not None]
        _ephemeral(respond, render.render_siblings(entry, siblings))

    return on_siblings


def make_show_entry_listener(deps: Deps) -> Callable[..., None]:
    def on_show_entry(ack: Ack, action: dict[str, Any], respond: Respond) -> None:
        ack()
        entry = deps.entry(action.get("value") or "")
        if entry is None:
            _ephemeral(
                respond, render.render_error("That entry is no longer in the knowledge base.")
            )
            return
        _ephemeral(respond, render.render_entry(entry, titles=deps.titles()))

    return on_show_entry


def make_share_listener(deps: Deps) -> Callable[..., None]:
    """Post an ephemeral slash-command answer in the channel, then remove the ephemeral copy."""

    def on_share(
        ack: Ack, body: dict[str, Any], action: dict[str, Any], client: WebClient, respond: Respond
    ) -> None:
        ack()
        value, where = parse_value(action), _where(body)
        message = shared_message(deps, value, where)
        if message is None:
            _ephemeral(
                respond,
                render.render_error("This answer is too old to share; run the command again."),
            )
            return
        note = render.context(f"Shared by <@{where['user_id']}> via /traindoc")
        try:
            client.chat_postMessage(
                channel=where["channel_id"], text=message.text, blocks=[*message.blocks, note]
            )
        except SlackApiError as exc:
            error = exc.response.get("error", "")
            hint = (
                " Invite me first: `/invite @traindoc`."
                if error in ("not_in_channel", "channel_not_found")
                else ""
            )
            _ephemeral(respond, render.render_error(f"I couldn't post here ({error}).{hint}"))
            return
        respond(delete_original=True)

    return on_share


def shared_message(
    deps: Deps, value: dict[str, Any], where: dict[str, str]
) -> render.Message | None:
    if value.get("entry"):
        message, _ = answer_query(deps, value["entry"], where)
        return message
    record = deps.store.get_diagnosis(value.get("ref", ""))
    if record is None or not record.payload.get("input"):
        return None
    # Re-run on the stored (redacted) input: the shared copy gets its own feedback record.
    diagnosis = deps.diagnose(report_from_text(record.payload["input"], origin="slack:share"))
    shared = record_answer(
        deps,
        diagnosis,
        team_id=where["team_id"],
        channel=where["channel_id"],
        user=where["user_id"],
        origin="share",
        query=record.payload["input"],
    )
    return render.render_diagnosis(diagnosis, ref=shared.id, titles=deps.titles())
