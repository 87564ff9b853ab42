"""Settings from the environment (pydantic-settings, prefix TRAINDOC_; Slack secrets also by their usual names)."""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


def default_cache_dir() -> Path:
    import os

    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "traindoc"


def default_data_dir() -> Path:
    import os

    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "traindoc"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="TRAINDOC_", extra="ignore", frozen=True)

    # Knowledge base and index
    kb_dir: Path | None = None  # default: the bundled kb/entries
    index_dir: Path | None = None  # default: <cache>/index
    model_path: Path | None = None  # a local sentence-transformers model directory
    model_name: str = "sentence-transformers/all-MiniLM-L6-v2"
    abstain_below: float | None = None  # default: the calibrated threshold

    # Persistence
    database_url: str | None = None  # default: sqlite under the data dir
    redis_url: str | None = None
    retention_days: int = Field(default=90, ge=1)  # answers and feedback older than this are purged
    purge_interval_s: float = Field(default=3600.0, gt=0)

    # Slack
    slack_bot_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_BOT_TOKEN", "TRAINDOC_SLACK_BOT_TOKEN")
    )
    slack_app_token: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("SLACK_APP_TOKEN", "TRAINDOC_SLACK_APP_TOKEN")
    )
    slack_signing_secret: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices("SLACK_SIGNING_SECRET", "TRAINDOC_SLACK_SIGNING_SECRET"),
    )
    slack_api_url: str | None = None  # another Web API base URL (tests, proxies)
    passive_channels: list[str] = Field(default_factory=list)
    # Passive channels answer only confident matches; optionally demand more than the engine's threshold.
    passive_min_confidence: float | None = None
    max_download_bytes: int = 50 << 20
    listener_threads: int = 8  # Bolt's listeners: acks, buttons, commands (quick)
    metrics_host: str = "0.0.0.0"  # /metrics listens apart from the events port (HTTP mode)
    metrics_port: int | None = 9090
    worker_threads: int = 4  # downloads and diagnoses of messages (slow), bot.slack.workers
    work_queue_size: int = 32  # reports waiting for a worker; beyond it users hear "busy, retrying"

    def resolved_index_dir(self) -> Path:
        return self.index_dir or default_cache_dir() / "index"

    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        path = default_data_dir() / "traindoc.db"
        return f"sqlite:///{path}"
