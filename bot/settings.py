"""Settings from the environment (pydantic-settings, prefix TRAINDOC_; Slack secrets also by their
usual names)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

if TYPE_CHECKING:
    from kb.load import KnowledgeBase


def default_cache_dir() -> Path:
    import os

    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "traindoc"


def hyperscan_cache_dir() -> Path:
    """Where compiled Hyperscan databases are kept between runs (loading beats compiling)."""
    return default_cache_dir() / "hyperscan"


def default_data_dir() -> Path:
    import os

    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "traindoc"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="TRAINDOC_", extra="ignore", frozen=True)

    # Knowledge base and index
    kb_dir: Path | None = None  # default: the bundled kb/entries
    # A team's own entry trees merged on top of the bundled ones (os.pathsep- or comma-separated).
    kb_extra: Annotated[tuple[Path, ...], NoDecode] = ()
    index_dir: Path | None = None  # default: <cache>/index
    model_path: Path | None = None  # a local sentence-transformers model directory
    model_name: str = "sentence-transformers/all-MiniLM-L6-v2"
    abstain_below: float | None = None  # default: the calibrated threshold
    calibration: Path | None = None
    # Query encoder: "onnx" (ONNX Runtime, no torch at query time) or "torch"
    # (sentence-transformers); default: onnx when the model directory or the index holds the ONNX
    # file, else torch.
    embedder: Literal["onnx", "torch"] | None = None

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
    # Passive channels answer only confident matches; optionally demand more than the engine's
    # threshold.
    passive_min_confidence: float | None = None
    max_download_bytes: int = 50 << 20
    listener_threads: int = 8  # Bolt's listeners: acks, buttons, commands (quick)
    metrics_host: str = "0.0.0.0"  # /metrics listens apart from the events port (HTTP mode)
    metrics_port: int | None = 9090
    # Reports in flight (bot.slack.workers): most of their time is spent waiting on Slack (the
    # placeholder, the answer, retries after 429/5xx), so there are many; the CPU-bound diagnosis
    # itself runs in at most `diagnosis_slots` of them at once (memory and cores are bounded there).
    worker_threads: int = 16
    diagnosis_slots: int = 2
    download_threads: int = 8  # messages with files or thread history: waiting on Slack's file host
    work_queue_size: int = 32  # reports waiting for a worker; beyond it users hear "busy, retrying"

    @field_validator("calibration")
    @classmethod
    def _calibration_exists(cls, value: Path | None) -> Path | None:
        if value is not None and not value.is_file():
            raise ValueError(
                f"{value} is not a file (write one with `traindoc calibrate --out {value}`)"
            )
        return value

    @field_validator("kb_extra", mode="before")
    @classmethod
    def _split_paths(cls, value: object) -> object:
        if isinstance(value, str):
            import os
            import re

            return tuple(
                Path(p) for p in re.split(rf"[,{re.escape(os.pathsep)}]", value) if p.strip()
            )
        return value

    def load_kb(self, *, lenient: bool = False) -> KnowledgeBase:
        """The knowledge base these settings name: bundled (or KB_DIR) plus the team trees."""
        from kb.load import load_kb

        return load_kb(self.kb_dir, extra=self.kb_extra, lenient=lenient)

    def resolved_index_dir(self) -> Path:
        return self.index_dir or default_cache_dir() / "index"

    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        path = default_data_dir() / "traindoc.db"
        return f"sqlite:///{path}"
