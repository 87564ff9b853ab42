"""The whole pipeline on generated multi-rank failures: retrieval must answer the initiating rank's
failure (an OOM, an Xid, a data-loader death), not the NCCL timeouts that most ranks print."""

from __future__ import annotations

import pytest

from bot.ingest import normalize
from bot.model import LogFile, Report
from tests.fakes.scenarios import Scenario, all_scenarios

pytestmark = pytest.mark.timeout(900)  # the first run builds the index
SCENARIOS = [pytest.param(s, id=s.name) for s in all_scenarios()]


@pytest.fixture(scope="module")
def engine(bundled_engine):
    """The bundled KB's engine, shared with the other tests of the session."""
    return bundled_engine


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_top_result_is_in_the_initiators_family(scenario: Scenario, engine):
    files = tuple(LogFile(name=f.name, text=normalize(f.text)) for f in scenario.files)
    report = Report(files=files, kind="log")
    diagnosis = engine.diagnose(report)
    assert diagnosis.triage is not None
    if scenario.expect.rank is not None:
        assert diagnosis.triage.initiating.rank == scenario.expect.rank
    top = [c.id for c in diagnosis.results[:3]]
    assert top and top[0] in scenario.expect.family, f"{scenario.name}: {top}"
    out = diagnosis.to_json()
    assert out["triage"]["ranks_seen"] == diagnosis.triage.ranks_seen
