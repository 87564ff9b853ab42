"""`traindoc serve`: run the app over Socket Mode (default on-prem, no public URL) or HTTP."""

from __future__ import annotations

import logging
import threading
import time
from typing import Literal

from bot.model import DiagnosisEngine
from bot.settings import Settings
from bot.slack.metrics import Metrics
from bot.store.base import Store
from kb.errors import ConfigError

Mode = Literal["socket", "http"]
REQUIRED: dict[str, tuple[tuple[str, str], ...]] = {
    # mode -> (settings field, environment variable)
    "socket": (("slack_bot_token", "SLACK_BOT_TOKEN"), ("slack_app_token", "SLACK_APP_TOKEN")),
    "http": (
        ("slack_bot_token", "SLACK_BOT_TOKEN"),
        ("slack_signing_secret", "SLACK_SIGNING_SECRET"),
    ),
}
log = logging.getLogger("traindoc.serve")


def check_settings(settings: Settings, mode: Mode) -> None:
    missing = [env for field, env in REQUIRED[mode] if not _present(getattr(settings, field))]
    if missing:
        raise ConfigError(
            f"traindoc serve --{mode}: missing {', '.join(missing)} "
            "(set them in the environment; TRAINDOC_-prefixed names work too)"
        )


def _present(value: object) -> bool:
    secret = getattr(value, "get_secret_value", None)
    return bool(secret() if secret else value)


def load_settings() -> Settings:
    """Settings from the environment; a mistake is one ConfigError line naming the variable."""
    from pydantic import ValidationError

    try:
        return Settings()
    except ValidationError as exc:
        problems = "; ".join(
            f"TRAINDOC_{str(e['loc'][0]).upper()}: {e['msg']} (got {str(e.get('input'))[:40]!r})"
            for e in exc.errors()
        )
        raise ConfigError(f"invalid configuration: {problems}") from None


def start_purger(store: Store, settings: Settings) -> threading.Thread:
    """Every `purge_interval_s`: drop expired dedup claims and answers older than
    `retention_days`."""

    def loop() -> None:
        while True:
            try:
                claims = store.purge_expired()
                old = store.purge_history(older_than_s=settings.retention_days * 86400)
                log.info(
                    "purged %d expired claims and %d answers older than %d days",
                    claims,
                    old,
                    settings.retention_days,
                )
            except Exception:
                log.exception("purge failed")
            time.sleep(settings.purge_interval_s)

    thread = threading.Thread(target=loop, name="traindoc-purge", daemon=True)
    thread.start()
    return thread


def warmed_engine(settings: Settings) -> DiagnosisEngine:
    """Build the engine and pay its one-time costs (index, model) before Slack traffic arrives."""
    from bot.diagnose import Engine
    from bot.ingest import report_from_text

    log.info("loading the knowledge base, index and model…")
    started = time.monotonic()
    try:
        engine = Engine.from_settings(settings)
        engine.diagnose(
            report_from_text(
                "warm-up: why does training hang at the first allreduce?", origin="warmup"
            )
        )
    except OSError as exc:  # e.g. an unwritable or missing index directory
        where = f" ({exc.filename})" if exc.filename else ""
        raise ConfigError(
            f"cannot prepare the index{where}: {exc.strerror or exc}; set TRAINDOC_INDEX_DIR to a "
            "writable directory"
        ) from None
    log.info("engine ready in %.1f s", time.monotonic() - started)
    return engine


def serve(
    settings: Settings,
    *,
    mode: Mode,
    host: str = "0.0.0.0",
    port: int = 3000,
    engine: DiagnosisEngine | None = None,
    store: Store | None = None,
    log_level: str = "info",
    log_json: bool = False,
) -> None:
    """Block serving Slack until interrupted. Raises ConfigError before any network I/O."""
    from bot.slack.logging_setup import configure_logging

    try:
        configure_logging(log_level, json_lines=log_json)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    check_settings(settings, mode)
    from bot.slack.app import create_app
    from bot.slack.workers import WorkerPool

    metrics = Metrics()
    if engine is None:
        engine = warmed_engine(settings)
    pool = WorkerPool(settings.worker_threads, settings.work_queue_size)
    if store is None:
        from bot.store import store_from_settings

        store = store_from_settings(settings)
    app = create_app(settings, store=store, engine=engine, metrics=metrics, pool=pool)
    start_purger(store, settings)
    if mode == "socket":
        from slack_bolt.adapter.socket_mode import SocketModeHandler

        assert settings.slack_app_token is not None
        handler = SocketModeHandler(app, settings.slack_app_token.get_secret_value())
        try:
            handler.connect()
        except Exception as exc:  # noqa: BLE001 - any failure to open the socket is a setup problem
            raise ConfigError(
                f"cannot connect to Slack over Socket Mode: {type(exc).__name__}: {exc}"[:300]
            ) from None
        log.info("traindoc connected over Socket Mode")
        probes = None
        if settings.metrics_port is not None:  # the pod's liveness/readiness probes and /metrics
            from bot.slack.http import HttpServers, make_probe_server

            probes = make_probe_server(
                metrics,
                settings.metrics_host,
                settings.metrics_port,
                pool=pool,
                connected=handler.client.is_connected,
            ).start()
            assert probes.metrics is not None
            bound = HttpServers.port_of(probes.metrics)
            log.info(
                "metrics and probes on http://%s:%s (metrics, healthz, readyz)",
                settings.metrics_host,
                bound,
            )
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
        finally:
            handler.close()
            if probes is not None:
                probes.stop()
        return
    from bot.slack.http import HttpServers, make_http_servers

    servers = make_http_servers(
        app,
        metrics,
        host,
        port,
        metrics_host=settings.metrics_host,
        metrics_port=settings.metrics_port,
        pool=pool,
    ).start()
    assert servers.events is not None  # started with an events server
    bound = HttpServers.port_of(servers.events)
    where = (
        f"metrics on {settings.metrics_host}:{HttpServers.port_of(servers.metrics)}"
        if servers.metrics
        else "no metrics port"
    )
    log.info(
        "traindoc listening on http://%s:%s/slack/events (healthz, readyz); %s", host, bound, where
    )
    print(f"traindoc listening on http://{host}:{bound}/slack/events", flush=True)
    try:
        while servers.running():
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        servers.stop()
