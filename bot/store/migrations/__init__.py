"""Alembic migrations of the SQL store's schema; `upgrade(engine)` brings any database to head.

A database created before migrations existed (tables present, no alembic_version) is stamped at
the first revision, which is exactly that schema, and then upgraded.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import inspect, text
from sqlalchemy.engine import Connection, Engine

if TYPE_CHECKING:
    from alembic.config import Config

HERE = Path(__file__).parent
FIRST = "0001"
_PG_LOCK = (
    0x7472_6169  # pg_advisory_xact_lock key: replicas starting together migrate one at a time
)


def _config(connection: Connection) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(HERE))
    config.attributes["connection"] = connection
    return config


def head() -> str:
    from alembic.script import ScriptDirectory

    return ScriptDirectory(str(HERE)).get_current_head() or FIRST


def current(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    from alembic import command

    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK})
        config = _config(connection)
        tables = set(inspect(connection).get_table_names())
        if "traindoc_diagnoses" in tables and "alembic_version" not in tables:
            command.stamp(config, FIRST)
        command.upgrade(config, revision)
