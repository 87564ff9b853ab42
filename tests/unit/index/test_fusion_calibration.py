import numpy as np
import pytest

from index.calibration import PRIOR, Calibration, fit, load_all, save_all
from index.fusion import DECISIVE_MARGIN, Features, Scores, decisive_fingerprint, ranking


def feats(margin, strong=0.0, dense=0.5):
    return Features(margin, strong, strong, 0.5, dense, 1.0, 0.0)


def test_feature_vector_matches_names():
    assert len(feats(0.5).vector()) == len(Features.NAMES)


def test_strong_fingerprint_dominates_text_similarity():
    scores = Scores(
        fingerprint=np.array([1.0, 0.0, 0.0], np.float32),
        lexical=np.array([1.0, 9.0, 3.0], np.float32),
        dense=np.array([0.3, 0.7, 0.5], np.float32),
    )
    assert ranking(scores.fused()).tolist() == [0, 1, 2]
    assert scores.lexical_normalized.max() == pytest.approx(1.0)


def test_decisive_only_when_no_other_entry_comes_close():
    strong = np.array([True, False, False])
    assert decisive_fingerprint(np.array([1.15, 0.35, 0.0]), strong) == 0
    assert decisive_fingerprint(np.array([1.0, 1.0 - DECISIVE_MARGIN / 2, 0.0]), strong) is None
    assert decisive_fingerprint(np.array([0.35, 0.0, 0.0]), np.zeros(3, bool)) is None
    assert decisive_fingerprint(np.zeros(0), np.zeros(0, bool)) is None


def test_prior_confidence_grows_with_margin():
    low, high = PRIOR.confidence(feats(0.05)), PRIOR.confidence(feats(0.8, strong=1.0))
    assert 0.0 <= low < high <= 1.0


def test_fit_separates_right_from_wrong_and_roundtrips(tmp_path):
    rng = np.random.default_rng(0)
    rows, labels = [], []
    for _ in range(200):
        right = rng.random() < 0.5
        margin = rng.normal(0.6 if right else 0.05, 0.1)
        rows.append(feats(margin))
        labels.append(right)
    cal = fit(rows, labels)
    assert cal.confidence(feats(0.6)) > 0.8 > 0.2 > cal.confidence(feats(0.05))
    path = tmp_path / "cal.json"
    save_all({"hybrid": Calibration(cal.coef, cal.intercept, 0.42, 200)}, path)
    loaded = load_all(path)["hybrid"]
    assert loaded.threshold == 0.42 and loaded.coef == pytest.approx(cal.coef, abs=1e-5)
    assert "dense" not in load_all(path)


def test_calibration_for_other_features_falls_back_to_prior(tmp_path):
    path = tmp_path / "cal.json"
    path.write_text('{"features": ["x"], "coef": [1], "intercept": 0}')
    assert load_all(path) == {}


def test_bundled_calibration_loads():
    fitted = load_all()
    assert set(fitted) == {"hybrid", "fingerprint", "lexical", "dense"}
    for cal in fitted.values():
        assert len(cal.coef) == len(Features.NAMES) and 0.0 < cal.threshold < 1.0 and cal.fitted_on > 500
