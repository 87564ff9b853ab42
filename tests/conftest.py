"""Shared fixtures: one real embedding model per session, small composed knowledge bases."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kbfactory import FIXTURE_ENTRIES, write_kb


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
