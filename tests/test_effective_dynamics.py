"""Tests of localization.experiments.effective_dynamics (SGD and the effective flow from the same start)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from localization import data, initialisation, metrics, theory
from localization.experiments import effective_dynamics as cmp

# -------------------------------------------------------------------------------------------------
# monte_carlo_drift, compare_flow_and_sgd, flow_sweep
# -------------------------------------------------------------------------------------------------
N = 16


@pytest.fixture(scope="module")
def gaussian_task():
    return data.LengthscaleTask(data.Gaussian(1.0), data.Gaussian(2.0))


def test_monte_carlo_drift_matches_gaussian_closed_form(gaussian_task):
    # For Gaussian data -grad L is known exactly (theory.gaussian.flow); the Monte Carlo
    # mean must agree within 5 standard errors in every entry, and the errors must be ~1/sqrt(num).
    w = np.asarray(initialisation.init_weights(jax.random.key(0), N))
    s0, s1 = gaussian_task.covariances(N)
    exact = np.asarray(theory.gaussian.flow(w, s0, s1))
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
    w0 = initialisation.init_weights(jax.random.key(2), N, num=2)
    c = cmp.compare_flow_and_sgd(
        jax.random.key(3), gaussian_task, w0, lr=0.05, batch=2048, steps=60, checkpoints=5, dtype=jnp.float64
    )
    assert np.array_equal(np.asarray(c.sgd.times), np.asarray(c.flow.times))
    assert np.array_equal(np.asarray(c.flow.times), np.asarray(c.taylor.times))
    assert c.sgd.weights.shape == c.flow.weights.shape == (2, 5, N)
    assert np.allclose(np.asarray(c.flow.weights), np.asarray(c.taylor.weights), rtol=0, atol=1e-10)
    d = metrics.normalized_distance(c.sgd.weights[:, -1], c.flow.weights[:, -1])
    assert np.all(d < 0.1), d
    assert c.cov0.shape == c.cov1.shape == (N, N)


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
    w0 = initialisation.init_weights(jax.random.key(4), N)
    sweep = cmp.flow_sweep(tasks, w0, lr=0.1, steps=50, checkpoints=3, table=None)
    tabulated = cmp.flow_sweep(tasks, w0, lr=0.1, steps=50, checkpoints=3)
    assert sweep.weights.shape == tabulated.weights.shape == (2, 3, N)
    assert np.max(np.abs(np.asarray(sweep.weights) - np.asarray(tabulated.weights))) < 1e-5
    for p, task in enumerate(tasks):
        s0, s1 = task.covariances(N)
        one = theory.integrate_effective(
            w0, theory.amplifier_of(task.model1.marginal), s0, s1, lr=0.1, steps=50, checkpoints=3
        )
        assert np.allclose(np.asarray(sweep.weights[p]), np.asarray(one.weights), rtol=0, atol=1e-13)


def test_flow_sweep_validation():
    w0 = np.ones(N)
    with pytest.raises(TypeError, match="tasks"):
        cmp.flow_sweep([], w0, lr=0.1, steps=2)
    with pytest.raises(TypeError, match="taylor"):
        cmp.flow_sweep([data.LengthscaleTask.of(data.NLGP, xi=(1.0, 2.0), gain=1.0)], w0, lr=0.1, steps=2, taylor="yes")
    with pytest.raises(TypeError, match=r"tasks\[1\] must be a data.LengthscaleTask"):
        cmp.flow_sweep([data.family_task("NLGP", 1.0), object()], w0, lr=0.1, steps=2)


@pytest.mark.slow
def test_comparison_sweep_matches_one_comparison_per_task():
    # One vmapped SGD run over the tasks must follow each task's own run on the same data stream, and
    # the flows must be the per-task flows (float32 SGD: agreement to rounding, not bit for bit).
    tasks = [data.family_task("NLGP", g, xi=(1.0, 3.0)) for g in (1.0, 10.0)]
    w0 = initialisation.init_weights(jax.random.key(5), N, num=2)
    key = jax.random.key(3)
    settings = dict(lr=0.1, batch=200, steps=30, checkpoints=4, balanced=True)
    sweep = cmp.comparison_sweep(key, tasks, w0, **settings)
    assert sweep.sgd.weights.shape == sweep.flow.weights.shape == (2, 2, 4, N)
    assert sweep.cov0.shape == sweep.cov1.shape == (2, N, N) and sweep.taylor is None
    for p, task in enumerate(tasks):
        one = cmp.compare_flow_and_sgd(key, task, w0, taylor=False, **settings)
        picked = sweep.select(p)
        assert picked.sgd.weights.shape == picked.flow.weights.shape == (2, 4, N)
        assert np.array_equal(np.asarray(picked.sgd.weights), np.asarray(sweep.sgd.weights[p]))
        scale = np.max(np.abs(np.asarray(one.sgd.weights)))
        assert np.max(np.abs(np.asarray(sweep.sgd.weights[p]) - np.asarray(one.sgd.weights))) < 1e-5 * scale
        assert np.allclose(np.asarray(sweep.flow.weights[p]), np.asarray(one.flow.weights), rtol=0, atol=1e-13)
        assert np.array_equal(sweep.cov1[p], one.cov1)
        assert np.array_equal(np.asarray(sweep.sgd.times), np.asarray(one.flow.times))


def test_comparison_sweep_validation():
    key, w0 = jax.random.key(0), np.ones(N)
    task = data.family_task("NLGP", 1.0)
    with pytest.raises(TypeError, match="tasks must be a non-empty sequence"):
        cmp.comparison_sweep(key, [], w0, lr=0.1, batch=4, steps=2)
    with pytest.raises(TypeError, match=r"tasks\[1\] must be a data.LengthscaleTask"):
        cmp.comparison_sweep(key, [task, object()], w0, lr=0.1, batch=4, steps=2)
    with pytest.raises(ValueError, match="last axis of length n = 30"):
        cmp.comparison_sweep(key, [task], w0, lr=0.1, batch=4, steps=2, n=30)


# -------------------------------------------------------------------------------------------------
# the tabulated amplifier inside the experiment
# -------------------------------------------------------------------------------------------------
def test_tabulated_flow_matches_quadrature_flow():
    task = data.LengthscaleTask.of(data.NLGP, xi=(1.0, 2.0), gain=3.0)
    w0 = initialisation.init_weights(jax.random.key(6), N, num=2)
    a = cmp.compare_flow_and_sgd(jax.random.key(0), task, w0, lr=0.1, batch=8, steps=100, checkpoints=2, taylor=False)
    b = cmp.compare_flow_and_sgd(
        jax.random.key(0), task, w0, lr=0.1, batch=8, steps=100, checkpoints=2, taylor=False, table=None
    )
    assert np.max(np.abs(np.asarray(a.flow.weights) - np.asarray(b.flow.weights))) < 1e-5
    assert np.array_equal(np.asarray(a.sgd.weights), np.asarray(b.sgd.weights))  # same key, same stream


def test_table_validation():
    task = data.LengthscaleTask.of(data.NLGP, xi=(1.0, 2.0), gain=3.0)
    with pytest.raises(ValueError, match="table must be odd"):
        cmp.compare_flow_and_sgd(jax.random.key(0), task, np.ones(N), lr=0.1, batch=4, steps=2, table=100)
    with pytest.raises(ValueError, match="table must be odd"):
        cmp.flow_sweep([task], np.ones(N), lr=0.1, steps=2, table=100)


# -------------------------------------------------------------------------------------------------
# fig3a_amplifier: the paper code's Taylor-flow step
# -------------------------------------------------------------------------------------------------
def _fig3a_steps(w, s0, s1, kappa, tau, steps):
    """figures/fig3a.py's simulate_kurtosis (commit 5ebb565, lines 107-120), written out in NumPy."""
    for _ in range(steps):
        sw1, sw0 = s1 @ w, s0 @ w
        a = sw1 / np.sqrt(sw1 @ w)
        f = np.sqrt(2 / np.pi) * a + ((3 - kappa) / 6) * a**3
        w = w + tau * (f - (sw0 + sw1) / 2)
    return w


@pytest.mark.parametrize(
    "task",
    [
        data.LengthscaleTask.of(data.Kur, xi=(1.0, 3.0), k=5.0),
        data.LengthscaleTask.of(data.NLGP, xi=(1.0, 3.0), gain=1.0),
        data.LengthscaleTask(data.Ising(0.3), data.Ising(0.7)),
    ],
)
def test_fig3a_amplifier_reproduces_the_paper_code_step(task):
    marginal = task.model1.marginal
    s0, s1 = (np.asarray(s, np.float64) for s in task.covariances(N))
    kappa = marginal.fourth_moment / marginal.variance**2
    w0 = np.asarray(initialisation.init_weights(jax.random.key(3), N, init_scale=1e-3), np.float64)
    phi = cmp.fig3a_amplifier(marginal)
    run = theory.integrate_effective(w0, phi, s0, s1, lr=0.05, steps=30, checkpoints=[30])
    lib = np.asarray(run.weights[-1])
    ref = _fig3a_steps(w0, s0, s1, kappa, 0.05, 30)
    assert np.max(np.abs(lib - ref)) < 1e-12 * np.max(np.abs(ref))
    # not the book's flow with the right Taylor polynomial: that one is about half as large
    book = theory.integrate_effective(
        w0, theory.amplifier_taylor(marginal), s0, s1, lr=0.05, steps=30, checkpoints=[30]
    )
    assert np.linalg.norm(ref) > 1.5 * np.linalg.norm(np.asarray(book.weights[-1]))
    # doubling phi doubles the field and keeps its shape: 2 x the flow with phi / 2 from w0 / 2
    half = theory.CubicTaylor(phi.first / 2, phi.third / 2)
    halved = theory.integrate_effective(w0 / 2, half, s0, s1, lr=0.05, steps=30, checkpoints=[30])
    assert np.max(np.abs(2 * np.asarray(halved.weights[-1]) - lib)) < 1e-13 * np.max(np.abs(lib))


def test_fig3a_amplifier_validation():
    with pytest.raises(TypeError, match="marginal"):
        cmp.fig3a_amplifier("Kur(5)")

    class Heavy:
        variance, fourth_moment = 1.0, float("inf")

    class Degenerate:
        variance, fourth_moment = 0.0, 1.0

    with pytest.raises(ValueError, match="fourth moment"):
        cmp.fig3a_amplifier(Heavy())
    with pytest.raises(ValueError, match="variance"):
        cmp.fig3a_amplifier(Degenerate())


# -------------------------------------------------------------------------------------------------
# first_most_localized: where a sweep's fields are localized in most runs
# -------------------------------------------------------------------------------------------------
def test_first_most_localized_needs_more_than_half():
    from localization.experiments.kurtosis_threshold import first_most_localized

    params = [4.5, 5.0, 6.0, 8.0]
    shares = [[0.3, 0.9, 0.2, 0.1], [0.85, 0.9, 0.3, 0.2], [0.81, 0.9, 0.95, 0.2], [0.9, 0.9, 0.9, 0.9]]
    assert first_most_localized(params, shares) == 6.0  # 2 of 4 is half, not most; a share of 0.8 is not above
    assert np.isnan(first_most_localized(params, np.full((4, 4), 0.8)))  # none localized: NaN
    assert first_most_localized(params[:1], [[0.81, 0.81, 0.2]]) == 4.5
    with pytest.raises(ValueError, match="shares"):
        first_most_localized(params, shares[:3])
    with pytest.raises(ValueError, match="finite"):
        first_most_localized(params, np.full((4, 2), np.nan))
