"""Tests for localization.experiments.hypercube_basins: the hypercube flow's fixed points and their basins."""

import math

import jax
import numpy as np
import pytest

from localization import initialisation
from localization.experiments import hypercube_basin_scaling as hbs
from localization.experiments import hypercube_basins as hb
from localization.theory import hypercube_flow as hf
from localization.theory import hypercube_laws as hl

TOL = 1e-12


def ising(n, j1=0.7, j0=0.3):
    return hf.HypercubeTask.of(hl.ising_ring_law(j0, n), hl.ising_ring_law(j1, n), n)


def starts(key, n, num):
    return np.asarray(initialisation.init_weights(jax.random.PRNGKey(key), n, 1e-3, num=num))


def test_symmetric_flow_equals_the_library_flow():
    # the half-vertex form against hypercube_flow.flow, with and without ties, and on a law with zeros
    task = ising(6)
    flow = hb.symmetric_flow(task)
    w = np.r_[starts(0, 6, 5), [[1.0, 1.0, 0, 0, 0, 0], [2.0, -1.0, 1.0, 0, 0, 0]]]
    assert np.abs(np.asarray(flow.velocity(w)) - np.asarray(hf.flow(w, task))).max() < TOL
    p1 = np.asarray(hl.ising_ring_law(0.7, 6)).copy()
    p1[[5, 63 - 5]] = 0.0  # a vertex and its partner removed: still sign-symmetric
    zeros = hf.HypercubeTask.of(hl.ising_ring_law(0.3, 6), p1 / p1.sum(), 6)
    flow_z = hb.symmetric_flow(zeros)
    assert flow_z.half.shape[0] == 31
    assert np.abs(np.asarray(flow_z.velocity(w)) - np.asarray(hf.flow(w, zeros))).max() < TOL


def test_symmetric_flow_refuses_a_law_without_sign_symmetry():
    x = hl.vertices(5)
    p = np.exp(0.3 * np.sum(x * np.roll(x, -1, 1), 1) - 0.4 * x.sum(1))
    task = hf.HypercubeTask.of(p / p.sum(), hl.ising_ring_law(0.7, 5), 5)
    with pytest.raises(ValueError, match="task.p0 must be sign-symmetric"):
        hb.symmetric_flow(task)
    with pytest.raises(TypeError, match="HypercubeTask"):
        hb.symmetric_flow("Ising")


def test_every_certified_start_ends_on_an_exact_fixed_point():
    task = ising(8)
    arr = hb.flow_to_fixed_points(starts(1, 8, 32), task)
    assert arr.arrived.all()
    certified = ~arr.tied
    assert np.all(arr.certificate[certified] < 1)
    assert arr.residual < TOL and arr.iteration_gap < 1e-10
    flow = np.asarray(hf.flow(arr.fixed_points[certified], task))
    assert np.abs(flow).max() < TOL
    # the certified ball holds no hyperplane: the endpoint and its fixed point share every sign
    x = hl.vertices(8)
    assert np.all(np.sign(arr.endpoints[certified] @ x.T) == np.sign(arr.fixed_points[certified] @ x.T))


def test_fixed_step_euler_is_the_chapter_integration():
    # max_relative_step=None is hypercube_flow.integrate's Euler map, stopped at arrival
    task = ising(6)
    w0 = starts(2, 6, 4)
    arr = hb.flow_to_fixed_points(w0, task, lr=0.05, chunk_steps=20)
    for i in range(4):
        steps = int(round(arr.arrival_time[i] / 0.05))
        ref = hf.integrate(w0[i], task, lr=0.05, steps=steps, checkpoints=2).weights[-1]
        assert np.abs(np.asarray(ref) - arr.endpoints[i]).max() < 1e-10


def test_a_tied_fixed_point_is_reached_from_one_side_only():
    # Ising ring of 8 sites, key 0: three of 64 starts converge onto a fixed point lying on a hyperplane
    task = ising(8)
    flow = hb.symmetric_flow(task)
    arr = hb.flow_to_fixed_points(starts(0, 8, 64), task, confirm=False)
    assert arr.arrived.all() and arr.tied.sum() >= 1
    half, weighted = np.asarray(flow.half), np.asarray(flow.weighted)
    for i in np.flatnonzero(arr.tied):
        w_star = arr.fixed_points[i]
        s = half @ w_star
        k = int(np.argmin(np.abs(s)))
        assert abs(s[k]) < TOL * np.linalg.norm(w_star)  # on the hyperplane of vertex k
        x, p = half[k], weighted[k, 0] * half[k, 0]
        side = np.sign(half[k] @ arr.endpoints[i])
        for sign, expect in ((side, -1.0), (-side, 1.0)):  # back towards it, or away
            w = w_star + sign * 1e-7 * x
            rate = sign * (x @ np.asarray(flow.velocity(w)))
            if expect < 0:
                assert rate < 0
            else:  # f1's jump 2 p x: d<x, w>/dt = 2 p n - O(1e-7) away from the hyperplane
                assert abs(rate - 2 * p * 8) < 1e-5


def test_classes_are_up_to_the_ring_symmetries_and_report_the_exact_loss():
    task = ising(8)
    flow = hb.symmetric_flow(task)
    w_loc, ok = hf.fixed_point(np.eye(8)[0], task)
    assert ok
    images = [np.roll(w_loc, 3), -np.roll(w_loc[::-1], 5), w_loc]
    other = hb.flow_to_fixed_points(starts(1, 8, 4), task).fixed_points
    fps = np.r_[images, other]
    c = hb.classify_fixed_points(fps, np.ones(len(fps), bool), flow, reference=-np.roll(w_loc, 1))
    assert c.reference >= 0 and c.counts[c.reference] == 3
    assert np.all(c.labels[:3] == c.reference) and not np.any(c.labels[3:] == c.reference)
    assert c.counts.sum() == len(fps) and np.all(np.diff(c.counts) <= 0)
    assert np.all(np.argmax(np.abs(c.representatives), axis=1) == 0) and np.all(c.representatives[:, 0] > 0)
    exact = np.asarray(hf.expected_loss(c.representatives, task))
    assert np.abs(c.loss - exact).max() < TOL  # L(w*) = 1/2 - w*^T S w* / 2 at a fixed point
    assert c.peaks[0] == 3 and c.peak_signs[1] == -1.0
    skipped = hb.classify_fixed_points(fps, np.r_[False, np.ones(len(fps) - 1, bool)], flow)
    assert skipped.labels[0] == -1 and skipped.peaks[0] == -1 and skipped.reference == -1
    with pytest.raises(ValueError, match="arrived must be a bool array"):
        hb.classify_fixed_points(fps, np.ones(len(fps)), flow)


def test_families_join_near_equal_shapes_only():
    base = np.array([1.0, 0.5, 0.2, 0.1, 0.0, 0.1, 0.2, 0.5])
    near = np.roll(base, 2) * (1 + 0.01 * np.cos(np.arange(8)))  # 1 % off, shifted
    far = np.ones(8)
    assert hb.fixed_point_families(np.stack([base, near, far])).tolist() == [0, 0, 1]
    assert hb.fixed_point_families(np.stack([base, near, far]), tolerance=1e-4).tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="tolerance"):
        hb.fixed_point_families(np.stack([base]), tolerance=0.0)


def test_predictors_on_a_start_with_one_large_entry():
    # w0 = e_3 + tiny noise: every predictor but the sign one names site 3, f1 = Sigma1 e_3 / 2 there
    flow = hb.symmetric_flow(ising(8))
    w0 = np.eye(8)[3] + 1e-3 * starts(3, 8, 1)
    pred = hb.predict_peaks(w0, flow)
    assert list(pred) == list(hb.PEAK_PREDICTORS)
    for name in ("largest |w0|", "largest |Sigma1 w0|", "largest |f1(w0)|"):
        assert pred[name][0].tolist() == [3] and pred[name][1].tolist() == [1.0]
    assert np.abs(np.asarray(flow.f1(np.eye(8)[3])) - 0.5 * np.asarray(flow.sigma1)[3]).max() < TOL


def test_scores_count_exact_and_neighbouring_hits_and_the_paired_gap():
    peaks = np.array([0, 1, 2, 3, 9, 5])
    signs = np.ones(6)
    mask = np.array([True] * 5 + [False])
    preds = {
        "a": (np.array([0, 1, 2, 4, 0, 0]), np.array([1, 1, -1, 1, 1, 1.0])),  # exact on 3; 3 -> 4, 9 -> 0 near
        "b": (np.array([0, 5, 5, 3, 9, 5]), np.ones(6)),  # exact on 3 others
    }
    s = hb.score_predictors(preds, peaks, signs, mask, 10)
    assert (s["a"].hits, s["a"].total, s["b"].hits) == (3, 5, 3)
    assert s["a"].near_accuracy == 1.0 and s["b"].near_accuracy == 0.6
    assert math.isclose(s["a"].sign_accuracy, 2 / 3)
    assert math.isclose(s["a"].standard_error, math.sqrt(0.6 * 0.4 / 5))
    # best is "a" (ties go to the first); a alone right on 2 starts (1, 2), b alone on 2 (3, 9)
    assert s["a"].gap_to_best == 0.0 and s["b"].gap_to_best == 0.0
    assert math.isclose(s["b"].gap_standard_error, math.sqrt(4) / 5)
    with pytest.raises(ValueError, match="at least one start"):
        hb.score_predictors(preds, peaks, signs, np.zeros(6, bool), 10)


def test_uniform_share():
    assert np.allclose(hb.uniform_share(np.stack([np.ones(6), (-1.0) ** np.arange(6)])), [1.0, 0.0])
    with pytest.raises(ValueError, match="all-zero"):
        hb.uniform_share(np.zeros(4))


def test_basin_trend_recovers_a_logistic_law_and_refuses_separable_data():
    ns = np.array([6, 8, 10, 12, 14])
    p = 1 / (1 + np.exp(-(-12.0 + 1.1 * ns)))
    m = np.full(5, 10**7)
    fit = hbs.basin_trend(ns, np.round(m * p), m)
    # sampling error of the slope at m = 1e7 is ~1e-3; rounding to integers adds far less
    assert abs(fit.slope - 1.1) < 5 * fit.slope_se and fit.slope_se < 2e-3
    assert abs(fit.half - 12.0 / 1.1) < 1e-2 and fit.deviance < 1e-2 and fit.dof == 3
    with pytest.raises(ValueError, match="separable"):
        hbs.basin_trend(ns, [0, 0, 0, 100, 100], [100] * 5)
    with pytest.raises(ValueError, match="0 <= hits <= totals"):
        hbs.basin_trend(ns, [0, 0, 0, 101, 100], [100] * 5)


def test_arguments_are_validated():
    task = ising(6)
    with pytest.raises(ValueError, match=r"lr must be <= 2 / lambda_max\(S\)"):
        hb.flow_to_fixed_points(starts(0, 6, 2), task, lr=5.0)
    with pytest.raises(ValueError, match="all-zero row"):
        hb.flow_to_fixed_points(np.zeros((2, 6)), task)
    with pytest.raises(ValueError, match="w0 must have shape"):
        hb.flow_to_fixed_points(starts(0, 8, 2), task)
    with pytest.raises(ValueError, match="confirm=True needs task"):
        hb.flow_to_fixed_points(starts(0, 6, 2), hb.symmetric_flow(task))
    with pytest.raises(ValueError, match="max_relative_step"):
        hb.flow_to_fixed_points(starts(0, 6, 2), task, max_relative_step=-1.0)


def test_survey_at_six_sites_never_reaches_the_deepest_fixed_point():
    # Ising ring of 6: w_loc (from e_0) is deeper than every fixed point the flow reaches, and no start
    # of 64 reaches it (0 of 2000 in the development survey, keys 0-4)
    s = hb.basin_survey(jax.random.PRNGKey(7), ising(6), 64)
    assert s.arrival.arrived.all() and s.classes.reference == -1 and s.at_loc == 0.0
    w_loc_loss = float(hf.expected_loss(s.w_loc, ising(6)))
    assert s.classes.loss.min() > w_loc_loss + 1e-4
    assert math.isclose(s.classes.fractions.sum(), 1.0) and s.scores == {}


def test_basin_table_pools_the_keys(capsys):
    rows = hbs.basin_table("Ising", (6,), (0, 1), 16)
    assert len(rows) == 1 and rows[0]["n"] == 6 and rows[0]["starts"] == 32
    assert rows[0]["at_loc"] == 0.0 and rows[0]["loss_other"] > rows[0]["loss_loc"]
    assert rows[0]["predictors"] == {} and rows[0]["classes"] >= 1
    with pytest.raises(ValueError, match="family must be one of"):
        hbs.basin_table("Gauss", (6,), (0,), 4)
    with pytest.raises(ValueError, match="n must be <= 16"):
        hbs.basin_table("Ising", (17,), (0,), 4)


def scaling_rows(broad_fractions, m):
    """Rows as basin_table writes them, every localized start at w_loc, from broad fractions per n."""
    ns = (6, 8, 10, 12, 14, 16)
    return [
        {"n": n, "arrived": m, "at_loc_hits": m - round(m * b), "localized_hits": m - round(m * b)}
        for n, b in zip(ns, broad_fractions, strict=True)
    ]


def test_basin_scaling_recovers_a_geometric_shrink_above_the_threshold():
    # broad odds exactly geometric, x0.6 per site, above a sharp threshold between n = 8 and 12; at
    # m = 1e7 starts per n the sampling error of the slope is ~1e-3 and rounding adds far less
    odds = 0.08 * 0.6 ** (np.array([12, 14, 16]) - 12)
    broad = [0.9999, 0.999, 0.75, *(odds / (1 + odds))]
    scaling = hbs.basin_scaling(scaling_rows(broad, 10**7))
    assert 10 < scaling.threshold.half < 12 and scaling.above == (12, 14, 16)
    assert abs(scaling.shrink - 0.6) < 5 * scaling.shrink_se and scaling.shrink_se < 5e-3
    assert scaling.broad.deviance < scaling.broad_quantile and scaling.broad.dof == 1
    # a logistic law cannot follow the sharp rise and the slow tail at once: chi2(4) at 0.999 is 18.47
    assert scaling.threshold.deviance > 100 * scaling.threshold_quantile
    assert abs(scaling.threshold_quantile - 18.467) < 1e-3


def test_basin_scaling_refuses_bad_rows():
    rows = scaling_rows([0.99, 0.9, 0.5, 0.2, 0.1, 0.05], 1000)
    with pytest.raises(ValueError, match="localized_hits"):
        hbs.basin_scaling([{k: v for k, v in r.items() if k != "localized_hits"} for r in rows])
    with pytest.raises(ValueError, match="at least 3 ring sizes above the threshold"):
        hbs.basin_scaling(scaling_rows([0.999, 0.99, 0.98, 0.97, 0.6, 0.1], 1000))
    with pytest.raises(ValueError, match="level must be in"):
        hbs.basin_scaling(rows, level=1.0)
    with pytest.raises(TypeError, match="rows must be a list"):
        hbs.basin_scaling(rows[0])


def test_record_basin_tables_writes_both_families_with_the_settings(tmp_path, monkeypatch):
    import json

    calls = []  # basin_table itself is tested above: a stub records what the record asks of it

    def table(family, ns, keys, num, *, law_key, **options):
        calls.append((family, ns, keys, num, law_key, options))
        return [{"n": n, "family": family} for n in ns]

    monkeypatch.setattr(hbs, "basin_table", table)
    record = hbs.record_basin_tables(str(tmp_path / "basins.json"), (6, 8), (0, 3), 4, law_key=7, lr=0.02)
    assert record == json.loads((tmp_path / "basins.json").read_text(encoding="utf-8"))
    settings = {"ns": [6, 8], "keys": [0, 3], "num": 4, "law_key": 7, "flow_options": {"lr": 0.02}}
    assert record["settings"] == settings and "commit" in record and "jax_version" in record
    assert calls == [(f, (6, 8), (0, 3), 4, 7, {"lr": 0.02}) for f in ("Ising", "NLGP")]
    assert record["tables"] == {f: [{"n": 6, "family": f}, {"n": 8, "family": f}] for f in ("Ising", "NLGP")}
    with pytest.raises(ValueError, match="existing directory"):
        hbs.record_basin_tables(tmp_path / "no" / "basins.json", (6,), (0,), 4)
    assert len(calls) == 2  # refused before running anything
