"""Answer messages: mentions in channels, DMs, passive channels, and the log files attached to them.

Flow: gather the input (message text, attached text files, or for a bare mention in a thread the
earlier messages of that thread), post one placeholder, diagnose, replace the placeholder with the
answer. Passive channels get no placeholder and no answer unless a pasted log matches confidently.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from slack_sdk import WebClient

from bot.ingest import build_report, normalize
from bot.model import Diagnosis, LogFile, Report
from bot.redact import redact
from bot.render import blocks as render
from bot.slack import events
from bot.slack.deps import Deps, log, log_failure
from bot.slack.files import FileOrigins, download_text, file_url
from bot.slack.records import record_answer
from bot.slack.workers import WorkerPool
from kb.errors import IngestError, InputError

FAILURE_TEXT = (
    "Sorry, I couldn't analyse this (an internal error). Try again, or paste the log as a file."
)
BUSY_TEXT = "I'm busy with other logs right now: yours is next, I'll retry in a few seconds."
GAVE_UP_TEXT = "Still too busy to read this one, sorry. Please mention me again in a few minutes."
BUSY_RETRY_S = 5.0
BUSY_RETRIES = 12  # a minute of retries
THREAD_HISTORY_LIMIT = 200


def make_message_listener(deps: Deps) -> Callable[..., None]:
    """One listener for app_mention and message events; the dedup middleware has set
    context['surface']."""

    def on_message(
        event: dict[str, Any], body: dict[str, Any], client: WebClient, context: Any
    ) -> None:
        surface = context.get("surface")
        if surface is None:
            return
        received = time.monotonic()
        def task() -> None:
            answer(event, body, client, context, surface, received)

        pool = deps.downloads if needs_download(event, surface) else deps.pool
        if pool.submit(task):
            return  # Bolt's listener thread is free again at once: commands and buttons still ack
        retry_when_busy(deps, pool, task, client, event, surface, body.get("event_id", "?"))

    def answer(
        event: dict[str, Any],
        body: dict[str, Any],
        client: WebClient,
        context: Any,
        surface: events.Surface,
        started: float,
    ) -> None:
        event_id = body.get("event_id", "?")
        channel = event["channel"]
        thread = events.reply_thread(event, surface)
        placeholder_ts: str | None = None

        def reply(message: render.Message) -> None:
            """Replace the placeholder; if that fails (after the client's retries), post the answer
            anew and remove the placeholder, so no answer is lost and none is left half-done."""
            if placeholder_ts:
                try:
                    client.chat_update(channel=channel, ts=placeholder_ts, **message.kwargs())
                    return
                except Exception as exc:  # noqa: BLE001 - SlackApiError (ok:false) or a transport error
                    deps.metrics.api_errors.labels(method="chat.update").inc()
                    log.warning(
                        "event %s: chat.update failed (%s); posting the answer anew", event_id, exc
                    )
            client.chat_postMessage(channel=channel, thread_ts=thread, **message.kwargs())
            if placeholder_ts:
                try:
                    client.chat_delete(channel=channel, ts=placeholder_ts)
                except Exception as exc:  # noqa: BLE001 - a stale "working on it" is only cosmetic
                    deps.metrics.api_errors.labels(method="chat.delete").inc()
                    log.warning("event %s: could not remove the placeholder (%s)", event_id, exc)

        try:
            # at once, before downloads and the engine: the user sees we're on it
            if surface != "passive":
                try:
                    # One try: the placeholder is cosmetic, and waiting out a 429's Retry-After for
                    # it
                    # would delay the answer itself (which is then posted anew instead of updated).
                    placeholder_ts = single_try(client).chat_postMessage(
                        channel=channel, thread_ts=thread, **render.render_placeholder().kwargs()
                    )["ts"]
                except Exception as exc:  # noqa: BLE001 - the answer is still worth computing and posting
                    deps.metrics.api_errors.labels(method="chat.postMessage").inc()
                    log.warning(
                        "event %s: placeholder not posted (%s); answering without it", event_id, exc
                    )
            report = gather_report(deps, event, client, context, surface)
            if report is None:
                if surface != "passive":
                    reply(
                        render.render_help(
                            "Mention me with a traceback, or in the thread of a failing job's log."
                        )
                    )
                return
            if surface == "passive" and report.kind != "log":
                return  # passive mode never answers chatter
            diagnosis = deps.diagnose(report)
            if surface == "passive" and not confident_enough_for_passive(deps, diagnosis):
                return  # a passive channel never hears "no confident match"
            record = record_answer(
                deps,
                diagnosis,
                team_id=body.get("team_id", ""),
                channel=channel,
                user=event.get("user", ""),
                origin=surface,
                message_ts=event.get("ts", ""),
                query=report.text,
            )
            reply(render.render_diagnosis(diagnosis, ref=record.id, titles=deps.titles()))
            deps.metrics.answers.labels(surface=surface, verdict=diagnosis.verdict).inc()
            deps.metrics.latency.observe(time.monotonic() - started)
        except InputError as exc:  # the one catch: input the user can fix, said in the thread
            log.info("event %s: cannot read the input: %s", event_id, redact(str(exc)))
            if surface != "passive":
                reply(render.render_error(str(exc)))
        except Exception:  # noqa: BLE001 - a failing listener still answers in the thread
            deps.metrics.failures.labels(surface=surface).inc()
            log_failure("event %s: listener failed (%s in %s)", event_id, surface, channel)
            if surface != "passive":
                try:
                    reply(render.render_error(FAILURE_TEXT))
                except Exception:  # noqa: BLE001 - nothing more to do than log
                    log_failure("event %s: could not post the failure notice", event_id)

    return on_message


def single_try(client: WebClient) -> WebClient:
    """The same client without its retry handlers (for calls not worth waiting for)."""
    return WebClient(
        token=client.token, base_url=client.base_url, timeout=client.timeout, logger=client.logger
    )


def needs_download(event: Mapping[str, Any], surface: str) -> bool:
    """Attached files, or a bare mention in a thread (its history is fetched): network first."""
    return bool(event.get("files")) or (
        surface == "mention" and events.in_thread(event) and events.is_bare(event.get("text") or "")
    )


def retry_when_busy(
    deps: Deps,
    pool: WorkerPool,
    task: Callable[[], None],
    client: WebClient,
    event: Mapping[str, Any],
    surface: events.Surface,
    event_id: str,
) -> None:
    """The work queue is full: say so in the thread and retry a few times, never drop silently."""
    deps.metrics.busy.inc()
    log.warning("event %s: the work queue is full; retrying in %.0f s", event_id, BUSY_RETRY_S)
    channel, thread = event["channel"], events.reply_thread(event, surface)

    def say(text: str) -> None:
        if surface == "passive":
            return  # a passive channel hears only confident answers
        try:
            client.chat_postMessage(
                channel=channel, thread_ts=thread, **render.render_error(text).kwargs()
            )
        except Exception:  # noqa: BLE001 - the retry still runs; the failure is logged
            log_failure("event %s: could not post the busy notice", event_id)

    say(BUSY_TEXT)

    def attempt(left: int) -> None:
        if pool.submit(task):
            return
        if left <= 0:
            log.error("event %s: still busy after %d retries; giving up", event_id, BUSY_RETRIES)
            say(GAVE_UP_TEXT)
            return
        _later(BUSY_RETRY_S, attempt, left - 1)

    _later(BUSY_RETRY_S, attempt, BUSY_RETRIES - 1)


def _later(delay: float, fn: Callable[[int], None], arg: int) -> None:
    timer = threading.Timer(delay, fn, args=(arg,))
    timer.daemon = True
    timer.start()


def confident_enough_for_passive(deps: Deps, diagnosis: Diagnosis) -> bool:
    return events.answers_passively(
        diagnosis.verdict, diagnosis.confidence, deps.settings.passive_min_confidence
    )


def gather_report(
    deps: Deps, event: Mapping[str, Any], client: WebClient, context: Any, surface: str
) -> Report | None:
    """The Report for a message (None when there is nothing to diagnose)."""
    text = event.get("text") or ""
    sources: list[LogFile] = []
    body_text = normalize(text, slack=True).strip()
    if body_text:
        sources.append(LogFile(name="message", text=body_text))
    sources += read_files(
        deps,
        event.get("files") or [],
        token=_bot_token(client, context),
        origins=_origins(deps, context),
    )
    if not sources and surface == "mention" and events.is_bare(text) and events.in_thread(event):
        sources = thread_sources(deps, event, client, context)
    if not sources:
        return None
    try:
        report = build_report(sources, origin=f"slack:{surface}")
    except IngestError:
        return None
    return report


def read_files(
    deps: Deps, files: list[Mapping[str, Any]], *, token: str, origins: FileOrigins
) -> list[LogFile]:
    readable, skipped = events.text_files(files)
    if files and not readable:
        raise InputError(
            f"I can read text logs (.log, .txt, .gz or a snippet), not {', '.join(skipped[:3])}. "
            "Paste the log text instead."
        )
    out = []
    for f in readable:
        name = str(f.get("name") or f.get("title") or "attachment")
        try:
            text = download_text(
                file_url(f),
                name=name,
                token=token,
                max_bytes=deps.max_download_bytes,
                origins=origins,
            )
        except IngestError as exc:  # say which of several attachments it was
            raise IngestError(f"{name}: {exc}") from None
        out.append(LogFile(name=name, text=normalize(text)))
    return out


def thread_sources(
    deps: Deps, event: Mapping[str, Any], client: WebClient, context: Any
) -> list[LogFile]:
    """A bare mention in a thread: the thread's parent and earlier replies are the input."""
    replies = client.conversations_replies(
        channel=event["channel"], ts=event["thread_ts"], limit=THREAD_HISTORY_LIMIT
    )
    earlier = events.earlier_thread_messages(
        replies.get("messages") or [], before_ts=event["ts"], bot_user_id=context.bot_user_id
    )
    out: list[LogFile] = []
    token = _bot_token(client, context)
    for i, message in enumerate(earlier):
        text = normalize(message.get("text") or "", slack=True).strip()
        if text:
            out.append(LogFile(name=f"thread message {i + 1}", text=text))
        if message.get("files"):
            out += read_files(deps, message["files"], token=token, origins=_origins(deps, context))
    return out


def _bot_token(client: WebClient, context: Any) -> str:
    return context.get("bot_token") or client.token or ""


def _origins(deps: Deps, context: Any) -> FileOrigins:
    """Where the token may fetch files: the configured API origin, else Slack's hosts and this
    workspace's."""
    auth = context.get("authorize_result")
    return FileOrigins.for_slack(
        api_url=deps.settings.slack_api_url, workspace_url=getattr(auth, "url", None)
    )
