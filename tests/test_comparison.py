"""Tests of localization.theory.comparison (flow vs SGD measurements and experiment)."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from localization import data, models, theory, train
from localization.theory import comparison as cmp


# -------------------------------------------------------------------------------------------------
# normalized_distance
# -------------------------------------------------------------------------------------------------
def test_normalized_distance_closed_forms():
    e = np.eye(4)
    assert cmp.normalized_distance(3.0 * e[0], 0.5 * e[0]) == pytest.approx(0.0, abs=1e-15)
    assert cmp.normalized_distance(e[0], -2.0 * e[0]) == pytest.approx(2.0, abs=1e-15)
    assert cmp.normalized_distance(e[0], e[1]) == pytest.approx(math.sqrt(2.0), abs=1e-15)
    # broadcasting over leading axes, scale invariance
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 5, 7)), rng.normal(size=(3, 5, 7))
    d = cmp.normalized_distance(a, b)
    assert d.shape == (3, 5)
    assert np.allclose(d, cmp.normalized_distance(2.5 * a, 0.1 * b), rtol=0, atol=1e-14)
    # law of cosines: |a^ - b^|^2 = 2 - 2 cos
    cos = np.sum(a * b, -1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
    assert np.allclose(d**2, 2 - 2 * cos, rtol=0, atol=1e-13)


def test_normalized_distance_validation():
    with pytest.raises(ValueError, match="w_a"):
        cmp.normalized_distance(np.zeros(3), np.ones(3))
    with pytest.raises(ValueError, match="w_b"):
        cmp.normalized_distance(np.ones(3), np.zeros(3))
    with pytest.raises(ValueError, match="last axes"):
        cmp.normalized_distance(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="w_a must be finite"):
        cmp.normalized_distance(np.array([1.0, np.nan]), np.ones(2))
    with pytest.raises(TypeError, match="w_a"):
        cmp.normalized_distance("x", np.ones(2))


# -------------------------------------------------------------------------------------------------
# peak_agreement
# -------------------------------------------------------------------------------------------------
def _bump(n, centre, sign=1.0):
    i = np.arange(n)
    d = np.minimum(np.abs(i - centre), n - np.abs(i - centre))
    return sign * np.exp(-(d**2) / 4.0)


def test_peak_agreement_counts_and_wraparound():
    n = 20
    sim = np.stack([_bump(n, 3), _bump(n, 0), _bump(n, 10), _bump(n, 5, -1.0)])
    flow = np.stack([_bump(n, 3), _bump(n, 19), _bump(n, 13), _bump(n, 5)])
    r = cmp.peak_agreement(sim, flow, tolerance=1)
    assert r.peak_sim.tolist() == [3, 0, 10, 5]  # |w| peak: a negative bump counts
    assert r.offset.tolist() == [0, 1, 3, 0]  # 0 vs 19 on a ring of 20 is 1 apart
    assert (r.count_exact, r.count_within, r.total, r.tolerance) == (2, 3, 4, 1)
    r0 = cmp.peak_agreement(sim, flow, tolerance=0)
    assert r0.count_within == r0.count_exact == 2


def test_peak_agreement_validation():
    with pytest.raises(ValueError, match="equal shapes"):
        cmp.peak_agreement(np.ones((2, 5)), np.ones((3, 5)))
    with pytest.raises(ValueError, match="tolerance"):
        cmp.peak_agreement(np.ones(6), np.ones(6), tolerance=4)
    with pytest.raises(ValueError, match="tolerance"):
        cmp.peak_agreement(np.ones(6), np.ones(6), tolerance=-1)
    with pytest.raises(TypeError, match="tolerance"):
        cmp.peak_agreement(np.ones(6), np.ones(6), tolerance=1.0)


# -------------------------------------------------------------------------------------------------
# first_crossing / threshold_crossing
# -------------------------------------------------------------------------------------------------
def test_first_crossing_interpolates_linear_curves():
    t = np.linspace(0.0, 10.0, 11)
    y = np.stack([0.2 * t, 0.05 * t, np.full_like(t, 5.0)])
    out = cmp.first_crossing(t, y, 1.0)
    assert out[0] == pytest.approx(5.0, abs=1e-12)
    assert np.isnan(out[1])  # reaches only 0.5
    assert out[2] == 0.0  # starts above
    # first crossing, not the last: a curve that goes up, down and up again
    z = np.array([0, 2, 0, 2, 0, 0, 0, 0, 0, 0, 0], float)
    assert cmp.first_crossing(t, z, 1.0) == pytest.approx(0.5, abs=1e-12)


def test_first_crossing_validation():
    t = np.arange(4.0)
    with pytest.raises(ValueError, match="strictly increasing"):
        cmp.first_crossing(np.array([0.0, 1.0, 1.0, 2.0]), np.zeros(4), 0.5)
    with pytest.raises(ValueError, match="last axis"):
        cmp.first_crossing(t, np.zeros(5), 0.5)
    with pytest.raises(ValueError, match="at least 2"):
        cmp.first_crossing(np.array([1.0]), np.zeros(1), 0.5)
    with pytest.raises(ValueError, match="NaN"):
        cmp.first_crossing(t, np.array([0, np.nan, 1, 2.0]), 0.5)
    with pytest.raises(ValueError, match="level"):
        cmp.first_crossing(t, np.zeros(4), math.inf)


def test_threshold_crossing_linear_and_log():
    p = np.array([1.0, 2.0, 4.0, 8.0])
    y = np.array([0.0, 0.0, 1.0, 1.0])
    assert cmp.threshold_crossing(p, y, 0.5) == pytest.approx(3.0, abs=1e-12)
    assert cmp.threshold_crossing(p, y, 0.5, log=True) == pytest.approx(math.sqrt(8.0), abs=1e-12)
    # decreasing curves cross too; no crossing gives NaN; exact hit returns the grid point
    assert cmp.threshold_crossing(p, 1 - y, 0.25) == pytest.approx(3.5, abs=1e-12)
    assert math.isnan(cmp.threshold_crossing(p, np.zeros(4), 0.5))
    assert cmp.threshold_crossing(p, np.array([0.0, 0.5, 1.0, 1.0]), 0.5) == 2.0


def test_threshold_crossing_validation():
    p = np.array([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="params must be strictly increasing"):
        cmp.threshold_crossing(np.array([1.0, 3.0, 2.0]), np.zeros(3), 0.5)
    with pytest.raises(ValueError, match="values must have the shape"):
        cmp.threshold_crossing(p, np.zeros(4), 0.5)
    with pytest.raises(ValueError, match="values must be finite"):
        cmp.threshold_crossing(p, np.array([0.0, np.inf, 1.0]), 0.5)
    with pytest.raises(ValueError, match="positive when log"):
        cmp.threshold_crossing(np.array([-1.0, 1.0, 2.0]), np.zeros(3), 0.5, log=True)
    with pytest.raises(ValueError, match="at least 2"):
        cmp.threshold_crossing(np.array([1.0]), np.zeros(1), 0.5)


# -------------------------------------------------------------------------------------------------
# monte_carlo_drift, compare_flow_and_sgd, flow_sweep (need the data module)
# -------------------------------------------------------------------------------------------------
N = 16


@pytest.fixture(scope="module")
def gaussian_task():
    return data.LengthscaleTask(data.Gaussian(1.0), data.Gaussian(2.0))


def test_monte_carlo_drift_matches_gaussian_closed_form(gaussian_task):
    # For Gaussian data -grad L is known exactly (theory.expected_gradient_gaussian); the Monte Carlo
    # mean must agree within 5 standard errors in every entry, and the errors must be ~1/sqrt(num).
    w = np.asarray(models.init_weights(jax.random.key(0), N))
    s0, s1 = gaussian_task.covariances(N)
    exact = -np.asarray(theory.expected_gradient_gaussian(w, s0, s1))
    mc = cmp.monte_carlo_drift(jax.random.key(1), gaussian_task, w, num=2**15, chunks=8)
    assert mc.num == 2**15
    z = np.abs(mc.mean - exact) / mc.stderr
    assert np.max(z) < 5.0, np.max(z)
    assert np.all(mc.stderr < 0.05) and np.all(mc.stderr > 1e-4)


def test_monte_carlo_drift_validation(gaussian_task):
    w = np.ones(N)
    key = jax.random.key(0)
    with pytest.raises(ValueError, match="num"):
        cmp.monte_carlo_drift(key, gaussian_task, w, num=10, chunks=8)
    with pytest.raises(ValueError, match="chunks"):
        cmp.monte_carlo_drift(key, gaussian_task, w, num=100, chunks=1)
    with pytest.raises(ValueError, match="single weight vector"):
        cmp.monte_carlo_drift(key, gaussian_task, np.ones((2, N)), num=100)
    with pytest.raises(ValueError, match="length n"):
        cmp.monte_carlo_drift(key, gaussian_task, w, num=100, n=N + 1)
    with pytest.raises(TypeError, match="key"):
        cmp.monte_carlo_drift(0, gaussian_task, w, num=100)
    with pytest.raises(TypeError, match="task"):
        cmp.monte_carlo_drift(key, object(), w, num=100)


def test_compare_flow_and_sgd_gaussian_large_batch(gaussian_task):
    # Gaussian data: Eq. (5) with phi(a) = sqrt(2/pi) a is the exact mean flow, so large-batch SGD
    # follows it closely; times agree; the Taylor flow equals the exact one (phi is linear).
    w0 = models.init_weights(jax.random.key(2), N, num=2)
    c = cmp.compare_flow_and_sgd(jax.random.key(3), gaussian_task, w0, lr=0.05, batch=2048, steps=60,
                                 checkpoints=5, dtype=jnp.float64)
    assert np.array_equal(np.asarray(c.sgd.times), np.asarray(c.flow.times))
    assert np.array_equal(np.asarray(c.flow.times), np.asarray(c.taylor.times))
    assert c.sgd.weights.shape == c.flow.weights.shape == (2, 5, N)
    assert np.allclose(np.asarray(c.flow.weights), np.asarray(c.taylor.weights), rtol=0, atol=1e-10)
    d = cmp.normalized_distance(c.sgd.weights[:, -1], c.flow.weights[:, -1])
    assert np.all(d < 0.1), d
    assert c.sigma0.shape == c.sigma1.shape == (N, N)


def test_compare_flow_and_sgd_validation(gaussian_task):
    key = jax.random.key(0)
    w0 = np.ones(N)
    with pytest.raises(ValueError, match="n = "):
        cmp.compare_flow_and_sgd(key, gaussian_task, w0, lr=0.1, batch=4, steps=2, n=N + 1)
    with pytest.raises(TypeError, match="taylor"):
        cmp.compare_flow_and_sgd(key, gaussian_task, w0, lr=0.1, batch=4, steps=2, taylor=1)
    with pytest.raises(TypeError, match="task"):
        cmp.compare_flow_and_sgd(key, object(), w0, lr=0.1, batch=4, steps=2)
    with pytest.raises(ValueError, match="lr"):
        cmp.compare_flow_and_sgd(key, gaussian_task, w0, lr=-0.1, batch=4, steps=2)


def test_flow_sweep_matches_single_flows():
    tasks = [data.LengthscaleTask.of(data.NLGP, xi=(1.0, 2.0), gain=g) for g in (0.5, 3.0)]
    w0 = models.init_weights(jax.random.key(4), N)
    sweep = cmp.flow_sweep(tasks, w0, lr=0.1, steps=50, checkpoints=3, table=None)
    tabulated = cmp.flow_sweep(tasks, w0, lr=0.1, steps=50, checkpoints=3)
    assert sweep.weights.shape == tabulated.weights.shape == (2, 3, N)
    assert np.max(np.abs(np.asarray(sweep.weights) - np.asarray(tabulated.weights))) < 1e-5
    for p, task in enumerate(tasks):
        s0, s1 = task.covariances(N)
        one = theory.integrate_effective(w0, theory.amplifier(task.model1.marginal), s0, s1, lr=0.1, steps=50,
                                         checkpoints=3)
        assert np.allclose(np.asarray(sweep.weights[p]), np.asarray(one.weights), rtol=0, atol=1e-13)


def test_flow_sweep_validation():
    w0 = np.ones(N)
    with pytest.raises(TypeError, match="tasks"):
        cmp.flow_sweep([], w0, lr=0.1, steps=2)
    with pytest.raises(TypeError, match="taylor"):
        cmp.flow_sweep([data.LengthscaleTask.of(data.NLGP, xi=(1.0, 2.0), gain=1.0)], w0, lr=0.1, steps=2,
                       taylor="yes")


# -------------------------------------------------------------------------------------------------
# tabulated amplifier
# -------------------------------------------------------------------------------------------------
def test_tabulated_amplifier_accuracy_and_oddness():
    a = np.clip(np.linspace(-1, 1, 3001) + 1e-4 * np.sin(np.arange(3001)), -1, 1)
    for m in (data.Ising(0.7).marginal, data.NLGP(1.0, 100.0).marginal, data.Kur(1.0, 5.0).marginal):
        phi = theory.amplifier(m)
        tab = cmp.tabulate_amplifier(phi)
        assert np.max(np.abs(np.asarray(tab(a)) - np.asarray(phi(a)))) < 1e-6, m
        assert np.allclose(np.asarray(tab(-a)), -np.asarray(tab(a)), rtol=0, atol=1e-15)
        assert float(tab(0.0)) == 0.0
    # linear functions are reproduced exactly by linear interpolation (Gaussian phi)
    lin = cmp.tabulate_amplifier(theory.amplifier(data.Gaussian(1.0).marginal), num=5)
    assert np.allclose(np.asarray(lin(a)), math.sqrt(2 / math.pi) * a, rtol=0, atol=1e-14)
    # a pytree: passes through jit, and outside [-1, 1] inputs are clipped
    f = jax.jit(lambda t, x: t.core(x))
    assert float(f(lin, 2.0)) == pytest.approx(math.sqrt(2 / math.pi), abs=1e-14)


def test_tabulated_flow_matches_quadrature_flow():
    task = data.LengthscaleTask.of(data.NLGP, xi=(1.0, 2.0), gain=3.0)
    w0 = models.init_weights(jax.random.key(6), N, num=2)
    a = cmp.compare_flow_and_sgd(jax.random.key(0), task, w0, lr=0.1, batch=8, steps=100, checkpoints=2, taylor=False)
    b = cmp.compare_flow_and_sgd(jax.random.key(0), task, w0, lr=0.1, batch=8, steps=100, checkpoints=2, taylor=False,
                                 table=None)
    assert np.max(np.abs(np.asarray(a.flow.weights) - np.asarray(b.flow.weights))) < 1e-5
    assert np.array_equal(np.asarray(a.sgd.weights), np.asarray(b.sgd.weights))  # same key, same stream


def test_tabulate_validation():
    phi = theory.amplifier(data.Gaussian(1.0).marginal)
    with pytest.raises(ValueError, match="num must be odd"):
        cmp.tabulate_amplifier(phi, num=10)
    with pytest.raises(ValueError, match="num"):
        cmp.tabulate_amplifier(phi, num=1)
    with pytest.raises(TypeError, match="phi"):
        cmp.tabulate_amplifier(3.0)
    with pytest.raises(ValueError, match="finite"):
        cmp.tabulate_amplifier(lambda a: a / 0.0 * 0.0)
    task = data.LengthscaleTask.of(data.NLGP, xi=(1.0, 2.0), gain=3.0)
    with pytest.raises(ValueError, match="table must be odd"):
        cmp.compare_flow_and_sgd(jax.random.key(0), task, np.ones(N), lr=0.1, batch=4, steps=2, table=100)
    with pytest.raises(ValueError, match="table must be odd"):
        cmp.flow_sweep([task], np.ones(N), lr=0.1, steps=2, table=100)
