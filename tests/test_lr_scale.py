"""Tests of the learning-rate x initial-scale sweep (effective-dynamics chapter, issue 26)."""

import jax
import numpy as np
import pytest

from localization import data, enable_float64, initialisation, metrics, theory
from localization.experiments import step_size as cmp

enable_float64()


def test_divergence_threshold_is_four_over_top_eigenvalue():
    # identity covariances: mu_max = 2, threshold 2
    eye = np.eye(5)
    assert cmp.divergence_threshold(eye, eye) == pytest.approx(2.0, rel=1e-12)
    task = data.family_task("NLGP", 100.0, xi=(0.3, 0.7))
    s0, s1 = (np.asarray(s) for s in task.covariances(40))
    # circulant: the top eigenvalue is the constant mode's, the row sum
    assert cmp.divergence_threshold(s0, s1) == pytest.approx(4 / (s0[0].sum() + s1[0].sum()), rel=1e-10)
    with pytest.raises(ValueError):
        cmp.divergence_threshold(np.eye(3), np.eye(4))


@pytest.mark.slow
def test_expected_step_linear_part_is_exact():
    # E[ReLU(<w,X>) X] = Sigma w / 2 for a distribution symmetric under x -> -x (Monte Carlo, NLGP)
    task = data.family_task("NLGP", 100.0, xi=(0.3, 0.7))
    x, y = task.sample(jax.random.key(0), 200_000, 12, np.float64)
    x, y = np.asarray(x), np.asarray(y)
    w = np.asarray(initialisation.init_weights(jax.random.key(1), 12))
    for label in (0, 1):
        xs = x[y == label]
        got = (np.maximum(xs @ w, 0)[:, None] * xs).mean(0)
        want = 0.5 * np.cov(xs.T, bias=True) @ w
        se = (np.maximum(xs @ w, 0)[:, None] * xs).std(0) / np.sqrt(len(xs))
        assert np.all(np.abs(got - want) < 5 * se + 1e-12)


@pytest.mark.slow
def test_flow_diverges_exactly_above_threshold():
    # Euler steps of the flow from large weights: bounded below 4/mu_max, unbounded above
    task = data.family_task("NLGP", 100.0, xi=(0.3, 0.7))
    s0, s1 = (np.asarray(s) for s in task.covariances(20))
    eta_c = cmp.divergence_threshold(s0, s1)
    phi = theory.tabulate_amplifier(theory.amplifier_of(task.model1.marginal), 1025)
    w0 = 100.0 * np.asarray(initialisation.init_weights(jax.random.key(2), 20, num=2))
    norms = {}
    for f in (0.95, 1.05):
        run = theory.integrate_effective(w0, phi, s0, s1, lr=f * eta_c, steps=800, checkpoints=1)
        norms[f] = np.linalg.norm(np.asarray(run.weights[..., -1, :]), axis=-1)
    assert np.all(norms[0.95] < 10) and np.all(~np.isfinite(norms[1.05]) | (norms[1.05] > 1e6))


def test_fixed_point_threshold_localized_and_consistent():
    task = data.family_task("NLGP", 100.0, xi=(0.3, 0.7))
    fp = cmp.fixed_point_threshold(task, 40)
    assert float(metrics.ipr(fp.w_star)) > 0.8
    assert np.all(fp.eigenvalues < 0)  # a stable fixed point of the flow
    assert fp.threshold == pytest.approx(2 / abs(fp.eigenvalues[0]), rel=1e-12)
    # the amplifier term's Jacobian is PSD-like, so the threshold is not below 4/mu_max
    assert fp.threshold >= cmp.divergence_threshold(*task.covariances(40)) - 1e-9
    with pytest.raises(TypeError):
        cmp.fixed_point_threshold("NLGP", 40)


@pytest.mark.slow
def test_lr_scale_sweep_shapes_and_masking():
    tasks = cmp.lr_scale_tasks((100.0, 0.01))
    w = np.asarray(initialisation.init_weights(jax.random.key(3), 16, num=2))
    r = cmp.lr_scale_sweep(jax.random.key(4), tasks, w, [0.2, 0.4], [1e-3, 1e4], t_end=4.0, batch=64)
    assert r.sgd.shape == r.flow.shape == (2, 2, 2, 2, 16)
    assert list(r.steps) == [20, 10] and r.total_steps == 20
    assert not r.sgd_diverged.any() and not r.flow_diverged.any()
    # a learning rate with 10 steps to t_end: its field was read at step 10, not 20
    one = cmp.lr_scale_sweep(jax.random.key(4), tasks, w, [0.4], [1e-3, 1e4], t_end=4.0, batch=64)
    assert np.allclose(one.flow[:, 0], r.flow[:, 1], rtol=1e-10, atol=1e-12)
    assert np.allclose(one.sgd[:, 0], r.sgd[:, 1], rtol=1e-4, atol=1e-6)


def test_lr_scale_sweep_validates():
    tasks = cmp.lr_scale_tasks((100.0,))
    w = np.ones((1, 8))
    with pytest.raises(ValueError):
        cmp.lr_scale_sweep(jax.random.key(0), tasks, w, [-0.1], [1.0], t_end=1.0, batch=8)
    with pytest.raises(ValueError):
        cmp.lr_scale_sweep(jax.random.key(0), tasks, w, [0.1], [1.0], t_end=0.0, batch=8)
    with pytest.raises(ValueError):
        cmp.lr_scale_sweep(jax.random.key(0), tasks, np.ones(8), [0.1], [1.0], t_end=1.0, batch=8)
    with pytest.raises(TypeError):
        cmp.lr_scale_sweep(jax.random.key(0), "NLGP", w, [0.1], [1.0], t_end=1.0, batch=8)


def test_record_stores_localization_shares(monkeypatch, tmp_path):
    # a tiny grid through the record writer: the shares are field_analysis.localization_share of the
    # fields at t_end (the book's definition of a localized field), null exactly where a run diverged
    from localization import field_analysis

    tiny = dict(cmp.LR_SCALE_RECORD, n=16, inits=2, lrs=(0.2, 2.6), scales=(1e-3, 1e4), batches=(64,), t_end=2.6)
    monkeypatch.setattr(cmp, "LR_SCALE_RECORD", tiny)
    w = np.asarray(initialisation.init_weights(jax.random.key(3), 16, num=2))
    record = cmp.record_lr_scale_sweep(jax.random.key(4), w, str(tmp_path / "r.json"), seed=0)
    runs = record["runs"]["64"]
    r = cmp.lr_scale_sweep(jax.random.key(4), cmp.lr_scale_tasks(), w, tiny["lrs"], tiny["scales"], t_end=2.6, batch=64)
    for k in ("sgd", "flow"):
        share = np.array(runs[f"{k}_share"], dtype=float)
        diverged = np.array(runs[f"{k}_diverged"])
        assert share.shape == (2, 2, 2, 2) and diverged.any() and not diverged.all()
        assert np.array_equal(np.isnan(share), diverged)
        expected = np.asarray(field_analysis.localization_share(getattr(r, k), 16))
        assert np.allclose(share[~diverged], expected[~diverged], atol=1e-4)


def test_lr_scale_record_reads_the_committed_record_and_its_thresholds():
    # the thresholds recomputed from the record's settings are those the record stores
    d = cmp.lr_scale_record()
    assert d.record["settings"]["gains"] == list(cmp.LR_SCALE_RECORD["gains"])
    assert np.allclose(d.eta_c, d.record["threshold"], rtol=1e-12, atol=0)
    assert d.fixed_point.threshold > d.eta_c[0]
    with pytest.raises(TypeError, match="path"):
        cmp.lr_scale_record(3)
