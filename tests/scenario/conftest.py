from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.slack.app import create_app
from bot.slack.metrics import Metrics
from bot.store.memory import MemoryStore
from tests.fakes.engine import FakeEngine
from tests.fakes.slack_api import FakeSlackAPI
from tests.fakes.slack_harness import test_settings


@pytest.fixture(scope="session")
def fake_engine() -> FakeEngine:
    return FakeEngine()


@pytest.fixture
def fake_slack() -> Iterator[FakeSlackAPI]:
    with FakeSlackAPI() as fake:
        yield fake


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture
def make_app(fake_slack, store, fake_engine):
    """create_app against the fake Web API, the memory store and the fake engine."""

    def make(**settings_overrides):
        settings = test_settings(fake_slack, **settings_overrides)
        return create_app(settings, store=store, engine=fake_engine, metrics=Metrics())

    return make
