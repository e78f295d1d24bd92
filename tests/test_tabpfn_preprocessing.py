"""TabPFN v3's member draws and first preprocessing steps (arenalite.models.tabpfn.ensemble /
.preprocessing) against ``tabpfn`` 9.2.0.

The fixtures (scripts/make_tabpfn_preprocessing_fixtures.py, tests/data/tabpfn/preprocessing_*)
hold what the package's fitted ``TabPFNClassifier`` / ``TabPFNRegressor`` drew per member and
what each member's own pipeline made of the rows up to its reshape step. The draws must be
equal, the transformed rows within 1e-12 (they are bit for bit). No torch or scikit-learn here.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from arenalite.models.tabpfn import ensemble as E
from arenalite.models.tabpfn import preprocessing as P

DATA = Path(__file__).resolve().parent / "data" / "tabpfn"
MANIFEST = json.loads((DATA / "preprocessing.json").read_text())
CASES = sorted(MANIFEST["cases"])
ROTATE = dict(np.load(DATA / "preprocessing_rotate.npz"))
TOL = 1e-12


def load(case: str):
    return dict(np.load(DATA / f"preprocessing_{case}.npz")), MANIFEST["cases"][case]


def members(d, o) -> E.Members:
    n = o["n_estimators_used"]
    if o["kind"] == "classifier":
        return E.draw_members(n, len(o["transforms"]), o["random_state"],
                              n_classes=o["n_classes"], class_shift_method=o["class_shift_method"])
    return E.draw_members(n, len(o["transforms"]), o["random_state"],
                          n_target_transforms=len(o["target_transforms"]))


def test_fixtures_present():
    assert {"classifier", "classifier_nan_constant", "classifier_categorical",
            "classifier_categorical_common", "classifier_wide", "classifier_duplicates",
            "regressor", "regressor_odd"} <= set(CASES)


@pytest.mark.parametrize("case", CASES)
def test_member_draws_match_package(case):
    d, o = load(case)
    m = members(d, o)
    assert m.n_members == o["n_estimators_used"]
    assert np.array_equal(m.feature_shifts, d["feature_shifts"])
    assert np.array_equal(m.config_index, d["config_index"])
    assert np.array_equal(m.pipeline_seeds, d["pipeline_seeds"])
    if o["kind"] == "classifier":
        assert np.array_equal(m.class_perms, d["class_perms"])
        assert m.target_index is None
    else:
        assert np.array_equal(m.target_index, d["target_index"])
        assert m.class_perms is None


@pytest.mark.parametrize("key", sorted(ROTATE))
def test_rotate_class_shift_matches_package(key):
    m, c, seed = (int(v) for v in key.split("_")[1:])
    ours = E.class_permutations(np.random.default_rng(seed), m, c, "rotate")
    assert np.array_equal(ours, ROTATE[key])


def test_class_permutations_rotate_and_none():
    rng = np.random.default_rng(5)
    perms = E.class_permutations(rng, 7, 4, "rotate")
    assert perms.shape == (7, 4)
    for p in perms:  # each a circular shift of 0 … 3
        assert any(np.array_equal(np.roll(np.arange(4), k), p) for k in range(4))
    assert E.class_permutations(rng, 3, 4, None) is None
    with pytest.raises(ValueError):
        E.class_permutations(rng, 3, 4, "sideways")
    with pytest.raises(ValueError):
        E.draw_members(4, 2, 0)


@pytest.mark.parametrize("case", CASES)
def test_modalities_and_clean_match_package(case):
    d, _ = load(case)
    modality = P.modalities(d["X_train"])
    assert np.array_equal(modality, d["modalities"])
    fit, clean_train = P.fit_clean(d["X_train"], modality)
    assert np.array_equal(clean_train, d["clean_train"], equal_nan=True)
    assert np.array_equal(P.clean(fit, d["X_test"]), d["clean_test"], equal_nan=True)


def test_few_distinct_values_rule():
    rng = np.random.default_rng(0)
    col3 = rng.choice([0.0, 1.0, 2.0], 101)
    x = np.stack([col3, rng.standard_normal(101), np.full(101, 4.0),
                  np.where(rng.random(101) < 0.5, np.nan, 1.0)], axis=1)
    # 3 distinct: categorical past 100 rows; NaN counts as a value (column 3 has 2)
    assert P.modalities(x).tolist() == [1, 0, 2, 1]
    assert P.modalities(x[:100]).tolist() == [0, 0, 2, 0]
    # declared categoricals: up to 30 distinct values, even when constant
    assert P.modalities(x[:100], [0, 1, 2]).tolist() == [1, 0, 1, 0]
    assert P.count_distinct(np.array([[0.0], [-0.0], [np.inf], [np.inf]])).tolist() == [2]


@pytest.mark.parametrize("case", CASES)
def test_member_reshape_matches_package(case):
    d, o = load(case)
    m = members(d, o)
    checked = 0
    for i in range(m.n_members):
        if f"reshape_train_{i}" not in d:
            continue
        cfg = o["transforms"][m.config_index[i]]
        fit, train = P.fit_member(d["clean_train"], d["modalities"], cfg["name"],
                                  cfg["categorical_name"], int(m.pipeline_seeds[i]),
                                  cfg["append_original"], cfg["max_features_per_estimator"])
        append = P.append_original(cfg["append_original"], int(fit.kept.sum()),
                                   cfg["max_features_per_estimator"])
        assert np.array_equal(fit.kept, d[f"kept_{i}"])
        test = P.transform_member(fit, d["clean_test"])
        # the reshape step alone (its output before the categorical encoding)
        x, infs, forced = P.set_aside_infs(d["clean_train"])
        rs, reshaped = P.fit_reshape(x[:, fit.kept], d["modalities"][fit.kept] == P.CATEGORICAL,
                                     cfg["name"], cfg["categorical_name"] == "numeric", append)
        reshaped = P.restore_infs(reshaped, infs, np.flatnonzero(fit.kept)[rs.sources])
        xt, infs_t, _ = P.set_aside_infs(d["clean_test"])
        reshaped_t = P.restore_infs(P.reshape(rs, xt[:, fit.kept]), infs_t,
                                    np.flatnonzero(fit.kept)[rs.sources])
        for ours, theirs in ((reshaped, d[f"reshape_train_{i}"]),
                             (reshaped_t, d[f"reshape_test_{i}"]),
                             (train, d[f"encode_train_{i}"]), (test, d[f"encode_test_{i}"])):
            assert ours.shape == theirs.shape
            assert np.array_equal(np.isnan(ours), np.isnan(theirs))
            assert np.array_equal(np.isinf(ours), np.isinf(theirs))
            ok = np.isfinite(theirs)
            assert np.array_equal(ours[~ok & ~np.isnan(theirs)], theirs[~ok & ~np.isnan(theirs)])
            assert np.abs(ours[ok] - theirs[ok]).max(initial=0.0) <= TOL
        checked += 1
    assert checked > 0
    if o["kind"] == "regressor":  # the quantile members, with the originals appended
        assert checked == m.n_members


@pytest.mark.parametrize("case", CASES)
def test_member_svd_matches_package(case):
    d, o = load(case)
    m = members(d, o)
    checked = 0
    for i in range(m.n_members):
        cfg = o["transforms"][m.config_index[i]]
        if f"svd_train_{i}" not in d:
            assert cfg["global_transformer_name"] in (None, "None") or f"encode_train_{i}" not in d
            continue
        fit, train = P.fit_member(d["clean_train"], d["modalities"], cfg["name"],
                                  cfg["categorical_name"], int(m.pipeline_seeds[i]),
                                  cfg["append_original"], cfg["max_features_per_estimator"],
                                  cfg["global_transformer_name"])
        test = P.transform_member(fit, d["clean_test"])
        assert fit.svd is not None
        assert len(fit.svd.components) == P.svd_components(
            cfg["global_transformer_name"], len(train), train.shape[1] - len(fit.svd.components))
        for ours, theirs in ((train, d[f"svd_train_{i}"]), (test, d[f"svd_test_{i}"])):
            assert ours.shape == theirs.shape
            assert np.array_equal(np.isnan(ours), np.isnan(theirs))
            assert np.array_equal(ours[np.isinf(theirs)], theirs[np.isinf(theirs)])
            ok = np.isfinite(theirs)
            # the fingerprint hashes these rounded to 12 decimals: they must match to ~1e-13
            assert np.abs(ours[ok] - theirs[ok]).max(initial=0.0) <= TOL
        checked += 1
    assert checked > 0


def test_squashing_scaler_branches():
    # the package's docstring examples (skrub's SquashingScaler)
    x = np.array([[np.inf], [-np.inf], [3], [-1], [np.nan], [2]])
    out = P.squash(P.fit_squashing(x), x)
    assert np.allclose(out[:, 0], [3, -3, 0.49319696, -1.34164079, np.nan, 0], equal_nan=True)
    x = np.array([[0.0], [1], [1], [1], [2], [np.nan]])
    out = P.squash(P.fit_squashing(x), x)
    assert np.allclose(out[:, 0], [-0.9486833, 0, 0, 0, 0.9486833, np.nan], equal_nan=True)
    x = np.array([[1.0], [1], [1], [np.nan]])
    out = P.squash(P.fit_squashing(x), x)
    assert np.array_equal(out[:, 0], [0, 0, 0, np.nan], equal_nan=True)


def test_refusals():
    x = np.ones((5, 2))
    with pytest.raises(ValueError, match="constant"):
        P.kept_features(x)
    with pytest.raises(ValueError, match="not ported"):
        P.fit_reshape(x, np.zeros(2, dtype=bool), "quantile_uni_extrapolate", False)
    with pytest.raises(ValueError, match="not ported"):
        P.fit_encode(x, np.array([0]), "onehot", 0)


def test_encoding_reaches_the_shuffled_codes():
    d, o = load("classifier_categorical_common")
    m = members(d, o)
    i = int(np.flatnonzero(m.config_index == 0)[0])
    cfg = o["transforms"][0]
    assert cfg["categorical_name"] == "ordinal_very_common_categories_shuffled"
    fit, _ = P.fit_member(d["clean_train"], d["modalities"], cfg["name"],
                          cfg["categorical_name"], int(m.pipeline_seeds[i]))
    assert fit.encode is not None and len(fit.encode.columns) == 2
    # an unseen category (−1 after cleaning) becomes NaN
    assert (d["clean_test"][:, 5] == -1).any()


def fingerprint_column(fit: P.MemberFit) -> int:
    """Where the shuffle put the fingerprint (the last column before it)."""
    return int(np.flatnonzero(fit.order == len(fit.order) - 1)[0])


def hash_input(fit: P.MemberFit, rows: np.ndarray) -> np.ndarray:
    """The rows the fingerprint hashed: unshuffled, without it, ±inf set aside as NaN."""
    unshuffled = np.empty_like(rows)
    unshuffled[:, fit.order] = rows
    return np.where(np.isinf(unshuffled[:, :-1]), np.nan, unshuffled[:, :-1])


def assert_fingerprints_match(fit: P.MemberFit, ours: np.ndarray, theirs: np.ndarray,
                              is_test: bool) -> None:
    """The hash bit for bit on the package's own inputs; ours equal wherever our inputs round
    (to 12 decimals) to the package's.

    Inputs equal up to float64 summation order (the machine's BLAS kernels: AVX-512
    OpenBLAS, wasm32's reference BLAS) round apart where a value sits on a rounding boundary,
    and that row's hash differs on that machine, as the package's own would (observed: one
    row of 50 on wasm32)."""
    fp = fingerprint_column(fit)
    pre_ours, pre_theirs = hash_input(fit, ours), hash_input(fit, theirs)
    assert np.array_equal(P.fingerprint(pre_theirs, fit.n_cells, is_test), theirs[:, fp])
    a, b = np.around(pre_ours, 12), np.around(pre_theirs, 12)
    same = np.all((a == b) | (np.isnan(a) & np.isnan(b)), axis=1)
    assert same.mean() >= 0.9
    assert np.array_equal(ours[same, fp], theirs[same, fp])


@pytest.mark.parametrize("case", CASES)
def test_member_cpu_pipeline_matches_package(case):
    """Every member's whole CPU pipeline (to the fingerprint and the feature shuffle)."""
    d, o = load(case)
    m = members(d, o)
    for i in range(m.n_members):
        cfg = o["transforms"][m.config_index[i]]
        fit, train = P.fit_member(d["clean_train"], d["modalities"], cfg["name"],
                                  cfg["categorical_name"], int(m.pipeline_seeds[i]),
                                  cfg["append_original"], cfg["max_features_per_estimator"],
                                  cfg["global_transformer_name"], add_fingerprint=True,
                                  shuffle=True, shift_method=o["feature_shift_method"],
                                  shift=int(m.feature_shifts[i]))
        test = P.transform_member(fit, d["clean_test"])
        fp = fingerprint_column(fit)
        rows = ((train, d[f"member_train_{i}"], False), (test, d[f"member_test_{i}"], True))
        for ours, theirs, is_test in rows:
            assert ours.shape == theirs.shape
            assert np.array_equal(np.isnan(ours), np.isnan(theirs))
            assert np.array_equal(ours[np.isinf(theirs)], theirs[np.isinf(theirs)])
            ok = np.isfinite(theirs)
            ok[:, fp] = False
            assert np.abs(ours[ok] - theirs[ok]).max(initial=0.0) <= TOL
            assert_fingerprints_match(fit, ours, theirs, is_test)


def test_fingerprint_collisions_and_rounding():
    x = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0 + 4e-13], [np.nan, np.nan],
                  [np.nan, np.nan]])
    train = P.fingerprint(x, 10, is_test=False)
    test = P.fingerprint(x, 10, is_test=True)
    # identical rows (and rows equal after rounding to 12 decimals) hash alike in test rows
    assert test[0] == test[1] == test[2] and test[3] == test[4]
    # training duplicates are rehashed with the next salts (an all-NaN row too: only the
    # retry loop on a collision with another row's hash skips all-NaN rows)
    assert len(set(train.tolist())) == 5
    assert train[0] == test[0] and train[1] == P.fingerprint(x[:1], 11, True)[0]
    # a difference that survives the rounding changes the hash: where the package's values
    # and ours could differ by ~1e-13 near a rounding boundary, a row's hash would flip
    assert P.fingerprint(x[:1] + [0, 1e-12], 10, True)[0] != test[0]
    assert 0.0 <= train.min() and train.max() <= 1.0


def test_feature_order():
    assert P.feature_order("rotate", 5, 7, 0).tolist() == np.roll(np.arange(5), 7).tolist()
    assert P.feature_order(None, 3, 7, 0).tolist() == [0, 1, 2]
    assert sorted(P.feature_order("shuffle", 6, 0, 3).tolist()) == list(range(6))


@pytest.mark.parametrize("case", CASES)
def test_member_model_input_matches_package(case):
    """The float32 model input after the package's torch soft clip (12σ for classifiers)."""
    d, o = load(case)
    m = members(d, o)
    checked = 0
    for i in range(m.n_members):
        if f"model_x_{i}" not in d:
            continue
        cfg = o["transforms"][m.config_index[i]]
        fit, _ = P.fit_member(d["clean_train"], d["modalities"], cfg["name"],
                                  cfg["categorical_name"], int(m.pipeline_seeds[i]),
                                  cfg["append_original"], cfg["max_features_per_estimator"],
                                  cfg["global_transformer_name"], add_fingerprint=True,
                                  shuffle=True, shift_method=o["feature_shift_method"],
                                  shift=int(m.feature_shifts[i]))
        assert np.array_equal(fit.categorical, d[f"model_categorical_{i}"])
        # the package's own CPU rows (fingerprints included: see assert_fingerprints_match)
        ours = P.model_input(fit, d[f"member_train_{i}"], d[f"member_test_{i}"],
                             o["outlier_removal_std"])
        theirs = d[f"model_x_{i}"]
        assert ours.dtype == np.float32 and ours.shape == theirs.shape
        assert np.array_equal(np.isnan(ours), np.isnan(theirs))
        ok = ~np.isnan(theirs)
        # float32 in torch: equal up to its summation order (observed: equal)
        assert np.abs(ours[ok].astype(np.float64) - theirs[ok]).max(initial=0.0) <= 1e-6
        checked += 1
    assert checked > 0 or o.get("infs")


def test_soft_clip():
    x = np.array([[0.0], [1.0], [-1.0], [0.5], [100.0]], dtype=np.float32)
    lower, upper = P.soft_clip_bounds(x, 1.0)
    out = P.soft_clip(x, lower, upper)
    assert out.dtype == np.float32
    assert upper[0] < out[4, 0] < 100  # squashed: log(1 + 100) above the upper bound
    assert out[4, 0] == np.float32(np.log(np.float32(101)) + upper[0])
    inside = (x[:, 0] >= lower[0]) & (x[:, 0] <= upper[0])
    assert np.array_equal(out[inside], x[inside])
    one = P.soft_clip_bounds(x[:1], 12.0)
    assert np.isinf(one[0]).all() and np.isinf(one[1]).all()
