"""The app factory: one Bolt App for Socket Mode and HTTP, a thin shell over the pure pipeline.

No Slack call happens here or at import time: the bot identity is fetched (auth.test) lazily on the
first request, and the engine/store are built by the caller (serve) or injected (tests).
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

from bot.model import DiagnosisEngine
from bot.redact import redact
from bot.render import blocks as render
from bot.settings import Settings
from bot.slack import actions, commands, home, messages, registry
from bot.slack.dedup import dedup_middleware
from bot.slack.deps import Deps, log
from bot.slack.identity import FirstEventIdentity
from bot.slack.metrics import Metrics
from bot.slack.retry import retry_handlers
from bot.slack.workers import WorkerPool
from bot.store.base import Store


def build_client(settings: Settings, metrics: Metrics | None = None) -> WebClient:
    """The Web API client: bot token, optional other base URL, retries (bot.slack.retry)
    counted in `metrics`."""
    token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else None
    kwargs: dict[str, Any] = {}
    if settings.slack_api_url:
        # WebClient needs the trailing slash
        kwargs["base_url"] = settings.slack_api_url.rstrip("/") + "/"
    return WebClient(
        token=token,
        retry_handlers=retry_handlers(metrics),
        logger=logging.getLogger("traindoc.slack.web"),
        **kwargs,
    )


def create_app(
    settings: Settings,
    *,
    client: WebClient | None = None,
    store: Store | None = None,
    engine: DiagnosisEngine | None = None,
    metrics: Metrics | None = None,
    pool: WorkerPool | None = None,
    downloads: WorkerPool | None = None,
) -> App:
    if engine is None:
        from bot.diagnose import Engine  # the pipeline, built only when nobody injected one

        engine = Engine.from_settings(settings)
    if store is None:
        from bot.store import store_from_settings

        store = store_from_settings(settings)
    metrics = metrics or Metrics()
    pool = pool or WorkerPool(settings.worker_threads, settings.work_queue_size)
    downloads = downloads or WorkerPool(
        settings.download_threads, settings.work_queue_size, name="traindoc-download"
    )
    deps = Deps(
        settings=settings,
        engine=engine,
        store=store,
        metrics=metrics,
        pool=pool,
        downloads=downloads,
        slots=threading.BoundedSemaphore(settings.diagnosis_slots),
    )
    secret = (
        settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else ""
    )
    app = App(
        client=client or build_client(settings, metrics),
        signing_secret=secret,
        # Socket Mode has no signatures; HTTP mode refuses to start without a secret (serve.py).
        request_verification_enabled=bool(secret),
        token_verification_enabled=False,  # no auth.test at construction time
        # ...but a failed first auth.test never loses the event
        before_authorize=FirstEventIdentity(),
        # Listeners block on the engine (up to seconds per log): size the pool for concurrent
        # reports.
        listener_executor=ThreadPoolExecutor(
            max_workers=settings.listener_threads, thread_name_prefix="traindoc-listener"
        ),
        logger=logging.getLogger("traindoc.slack.bolt"),
    )
    register(app, deps)
    return app


def register(app: App, deps: Deps) -> None:
    """Wire the handlers of registry.py (the manifests declare the same)."""
    app.use(dedup_middleware(deps))  # first of our middleware: duplicates never reach a listener

    on_message = messages.make_message_listener(deps)
    for bolt_event in sorted(set(registry.BOT_EVENTS.values()) - {"app_home_opened"}):
        app.event(bolt_event)(on_message)
    app.event("app_home_opened")(home.make_home_listener(deps))

    app.command(commands.COMMAND)(commands.make_command_listener(deps))

    app.action(render.ACTION_HELPFUL)(actions.make_helpful_listener(deps))
    app.action(render.ACTION_WRONG)(actions.make_wrong_listener(deps))
    app.action(render.ACTION_WHY)(actions.make_why_listener(deps))
    app.action(render.ACTION_SIBLINGS)(actions.make_siblings_listener(deps))
    app.action(render.ACTION_SHARE)(actions.make_share_listener(deps))
    app.action(render.SHOW_ENTRY_PATTERN)(actions.make_show_entry_listener(deps))
    app.view(render.FEEDBACK_MODAL)(actions.make_feedback_submission_listener(deps))
    app.options(render.ACTION_SEARCH_ENTRY)(actions.make_entry_search_listener(deps))

    @app.error
    def on_error(error: Exception, body: dict[str, Any]) -> None:
        log.error(
            "unhandled error for %s %s: %s",
            body.get("type"),
            body.get("event_id") or (body.get("trigger_id") or ""),
            redact(repr(error)),
        )
