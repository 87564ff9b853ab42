"""The SQL store's schema is versioned with Alembic: an empty database, one at the previous
revision and one created before migrations existed all reach head, on SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, inspect, text

from bot.store import migrations
from bot.store.base import Feedback
from bot.store.sql import SqlStore, metadata

POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request, tmp_path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'traindoc.db'}"
        return
    schema = f"migr_{uuid.uuid4().hex[:10]}"
    admin = create_engine(POSTGRES_URL)
    try:
        with admin.begin() as conn:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    except Exception as exc:  # noqa: BLE001 - any connection failure means "not here"
        pytest.skip(f"PostgreSQL not reachable at {POSTGRES_URL} ({type(exc).__name__}); it runs in CI")
    yield f"{POSTGRES_URL}?options=-csearch_path%3D{schema}"
    with admin.begin() as conn:
        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()


def _columns(engine) -> dict[str, set[str]]:
    inspector = inspect(engine)
    return {t: {c["name"] for c in inspector.get_columns(t)} for t in inspector.get_table_names() if t.startswith("traindoc_")}


def test_empty_database_upgrades_to_head_and_matches_the_code(database_url):
    engine = create_engine(database_url)
    assert migrations.current(engine) is None
    migrations.upgrade(engine)
    assert migrations.current(engine) == migrations.head() == "0002"
    assert _columns(engine) == {t.name: {c.name for c in t.columns} for t in metadata.tables.values()}
    engine.dispose()


def test_database_at_the_previous_revision_keeps_its_rows(database_url):
    engine = create_engine(database_url)
    migrations.upgrade(engine, "0001")
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO traindoc_feedback (id, diagnosis_id, team_id, \"user\", channel, helpful, predicted_id, correct_id, created_at)"
                " VALUES ('f1', 'd1', 'T1', 'U1', 'C1', false, 'a-entry', 'b-entry', 5.0)"
            )
        )
    engine.dispose()
    store = SqlStore(database_url)  # the app migrates at start-up
    assert migrations.current(store.engine) == "0002"
    assert store.feedback_since(0) == [
        Feedback(diagnosis_id="d1", team_id="T1", user="U1", channel="C1", helpful=False, predicted_id="a-entry", correct_id="b-entry", created_at=5.0)
    ]
    store.close()


def test_database_from_before_migrations_is_stamped_then_upgraded(database_url):
    engine = create_engine(database_url)
    migrations.upgrade(engine, "0001")
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE alembic_version"))
    engine.dispose()
    store = SqlStore(database_url)
    assert migrations.current(store.engine) == "0002"
    assert "note" in _columns(store.engine)["traindoc_feedback"]
    store.close()


def test_db_upgrade_command(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from bot.cli import app

    url = f"sqlite:///{tmp_path / 'cli.db'}"
    monkeypatch.setenv("TRAINDOC_DATABASE_URL", url)
    result = CliRunner().invoke(app, ["db", "upgrade"])
    assert result.exit_code == 0, result.output
    assert "0002" in result.stdout
    assert migrations.current(create_engine(url)) == "0002"
