"""Shared fixtures: one real embedding model per session, small composed knowledge bases.

Tiers: a test that needs the embedding model (through the fixtures in MODEL_FIXTURES) is marked
`model` here; tests that write big files or run for seconds carry `slow` themselves. The fast inner
loop is `pytest -m "not slow and not model"`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes import pools
from tests.fakes.kbfactory import FIXTURE_ENTRIES, write_kb

pools.track()  # fake Slack APIs wait for the app's queued work before they stop


# Fixtures that load all-MiniLM-L6-v2 (or build an index with it), directly or through the CLI.
MODEL_FIXTURES = frozenset({"embedder", "fixture_engine", "bundled_engine", "engine", "cli"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & MODEL_FIXTURES and not _uses_fake_engine(item):
            item.add_marker(pytest.mark.model)


def _uses_fake_engine(item: pytest.Item) -> bool:
    """The `engine` fixture of some modules is a FakeEngine: no model there."""
    fixture_defs = getattr(item, "_fixtureinfo", None)
    defs = fixture_defs.name2fixturedefs.get("engine", ()) if fixture_defs else ()
    return bool(defs) and all("FakeEngine" in str(getattr(d.func, "__annotations__", {}).get("return", "")) for d in defs)


@pytest.fixture(scope="session")
def embedder():
    from index.embed import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder.from_settings(None)


@pytest.fixture(scope="session")
def fixture_kb_dir(tmp_path_factory) -> Path:
    return write_kb(tmp_path_factory.mktemp("kb"), FIXTURE_ENTRIES)


@pytest.fixture(scope="session")
def fixture_engine(fixture_kb_dir, embedder, tmp_path_factory):
    from bot.diagnose import Engine
    from kb.load import load_kb

    return Engine(load_kb(fixture_kb_dir), embedder=embedder, index_dir=tmp_path_factory.mktemp("idx") / "index")


@pytest.fixture(scope="session")
def bundled_engine(embedder, tmp_path_factory):
    """The real bundled knowledge base with its index built once for the session."""
    from bot.diagnose import Engine
    from kb.load import load_kb

    engine = Engine(load_kb(), embedder=embedder, index_dir=tmp_path_factory.mktemp("bundled") / "index")
    engine.ensure_index()
    return engine
