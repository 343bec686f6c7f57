"""Tests of the steps of Lemma 3.1 (theory.batch_gradient, .exact_gated_mean) against closed forms."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from localization import data
from localization.theory import batch_gradient as bg
from localization.theory import exact_gated_mean as eg

SQ = math.sqrt(2 / math.pi)


def _batch(seed=0, num=64, n=5):
    k1, k2, k3 = jax.random.split(jax.random.key(seed), 3)
    x = jax.random.normal(k1, (num, n))
    y = jax.random.bernoulli(k2, 0.5, (num,)).astype(jnp.float64)
    w = jax.random.normal(k3, (n,))
    return w, x, y


def _toeplitz(n, rho):
    idx = np.arange(n)
    return rho ** np.abs(idx[:, None] - idx[None, :])


# ----------------------------------------------------------------------------- loss and gradient
@pytest.mark.slow
def test_mse_loss_matches_numpy():
    w, x, y = _batch()
    h = np.asarray(x) @ np.asarray(w)
    expected = np.mean((np.asarray(y) - np.maximum(h, 0)) ** 2)
    assert abs(float(bg.mse_loss(w, x, y)) - expected) < 1e-13


@pytest.mark.slow
def test_mse_gradient_equals_autodiff():
    w, x, y = _batch(1)
    auto = jax.grad(bg.mse_loss.core)(w, x, y)
    np.testing.assert_allclose(bg.mse_gradient(w, x, y), auto, rtol=0, atol=1e-13)


@pytest.mark.slow
def test_gradient_terms_recombine_and_broadcast():
    w, x, y = _batch(2)
    ws = jnp.stack([w, -w, 2 * w])  # leading axis of weights
    t = bg.gradient_terms(ws, x, y)
    assert t.label.shape == (3, 5) and t.relu.shape == (3, 5)
    g = bg.mse_gradient(ws, x, y)
    np.testing.assert_allclose(g, -2 * t.label + 2 * t.relu, atol=1e-14)
    np.testing.assert_allclose(g[0], bg.mse_gradient(w, x, y), atol=1e-14)
    assert bg.mse_loss(ws, x, y).shape == (3,)


@pytest.mark.slow
def test_gated_mean_matches_numpy_and_gaussian_closed_form():
    w, x, _ = _batch(3)
    xn, wn = np.asarray(x), np.asarray(w)
    expected = ((xn @ wn >= 0)[:, None] * xn).mean(0)
    np.testing.assert_allclose(bg.gated_mean(w, x), expected, atol=1e-14)
    # population value for Gaussian data: Sigma w / sqrt(2 pi w'Sigma w) (Stein), 4 standard errors
    n, num = 4, 200_000
    sigma = _toeplitz(n, 0.6)
    z = jax.random.normal(jax.random.key(7), (num, n)) @ jnp.asarray(np.linalg.cholesky(sigma).T)
    w = jnp.asarray([1.0, -0.5, 0.3, 0.8])
    est = np.asarray(bg.gated_mean(w, z))
    exact = sigma @ np.asarray(w) / math.sqrt(2 * math.pi * np.asarray(w) @ sigma @ np.asarray(w))
    se = np.sqrt(np.diag(sigma) / num)
    assert np.all(np.abs(est - exact) < 4 * se), (est, exact)
    np.testing.assert_allclose(eg.gaussian_gated_mean(w, sigma), exact, rtol=1e-14)
    assert eg.gaussian_gated_mean(jnp.stack([w, 2 * w]), sigma).shape == (2, 4)


# ----------------------------------------------------------------------------- conditioning
@pytest.mark.slow
def test_gaussian_gate_probability_closed_form_and_symmetry():
    n = 6
    sigma = _toeplitz(n, 0.5)
    w = jnp.asarray(np.linspace(-1, 1.3, n))
    i = 2
    a = float((sigma @ np.asarray(w))[i] / math.sqrt(np.asarray(w) @ sigma @ np.asarray(w)))
    xs = jnp.linspace(-2, 2, 9)
    p = eg.gaussian_gate_probability(w, sigma, i, xs)
    expected = 0.5 + 0.5 * jax.scipy.special.erf(xs * a / math.sqrt(1 - a * a) / math.sqrt(2))
    np.testing.assert_allclose(p, expected, atol=1e-14)
    np.testing.assert_allclose(p + p[::-1], 1.0, atol=1e-14)
    assert abs(float(eg.gaussian_gate_probability(w, sigma, i, 0.0)[0]) - 0.5) < 1e-15


@pytest.mark.slow
def test_gaussian_gate_probability_exact_for_gaussian_with_nonunit_variance():
    # X ~ N(0, s2 * C); sample X given X_i = x exactly and compare (4 standard errors)
    n, s2, i, x0, num = 4, 2.5, 1, 0.9, 100_000
    sigma = s2 * _toeplitz(n, 0.7)
    w = jnp.asarray([0.4, -1.0, 0.7, 0.2])
    si = sigma[:, i]
    cond_cov = sigma - np.outer(si, si) / sigma[i, i]
    evals, evecs = np.linalg.eigh(cond_cov)
    root = evecs * np.sqrt(np.clip(evals, 0, None))
    xs = x0 * si / sigma[i, i] + np.asarray(jax.random.normal(jax.random.key(5), (num, n))) @ root.T
    p_mc = np.mean(xs @ np.asarray(w) >= 0)
    p = float(eg.gaussian_gate_probability(w, sigma, i, x0)[0])
    assert abs(p_mc - p) < 4 * math.sqrt(p * (1 - p) / num), (p_mc, p)


@pytest.mark.slow
def test_empirical_gate_probability_discrete_total_expectation_is_exact():
    key = jax.random.key(11)
    x = jnp.where(jax.random.bernoulli(key, 0.5, (5000, 6)), 1.0, -1.0)
    w = jnp.asarray([0.3, -0.2, 1.0, 0.5, -0.7, 0.1])
    est = bg.empirical_gate_probability(w, x, 2)
    np.testing.assert_array_equal(est.x, [-1.0, 1.0])
    assert est.count.sum() == 5000
    lhs = float(bg.gated_mean(w, x)[2])
    rhs = float(np.sum(est.x * est.prob * est.count) / est.count.sum())
    assert abs(lhs - rhs) < 1e-14
    np.testing.assert_allclose(est.stderr, np.sqrt(est.prob * (1 - est.prob) / est.count))


@pytest.mark.slow
def test_empirical_gate_probability_continuous_bins():
    w, x, _ = _batch(4, num=1000, n=5)
    est = bg.empirical_gate_probability(w, x, 0, bins=10)
    assert est.x.shape == (10,) and est.count.sum() == 1000
    assert np.all(np.diff(est.x) > 0)
    assert np.all((est.prob >= 0) & (est.prob <= 1))


# ----------------------------------------------------------------------------- validation
@pytest.mark.slow
def test_validation_errors():
    w, x, y = _batch()
    with pytest.raises(ValueError, match="x must have 5 columns"):
        bg.mse_loss(w, x[:, :4], y)
    with pytest.raises(ValueError, match="x must be a batch"):
        bg.gated_mean(w, x[None])
    with pytest.raises(ValueError, match="x must have at least 2 axes"):
        bg.gated_mean(w, x[0])
    with pytest.raises(ValueError, match="x must contain at least one sample"):
        bg.gated_mean(w, x[:0])
    with pytest.raises(ValueError, match="x must be finite"):
        bg.gated_mean(w, x.at[0, 0].set(jnp.nan))
    with pytest.raises(ValueError, match="w must be finite"):
        bg.gated_mean(w.at[0].set(jnp.inf), x)
    with pytest.raises(TypeError, match="w must be an array"):
        bg.gated_mean("w", x)
    with pytest.raises(ValueError, match=r"y must have shape \(64,\)"):
        bg.mse_gradient(w, x, y[:3])
    with pytest.raises(ValueError, match="y must be finite"):
        bg.gradient_terms(w, x, y.at[0].set(jnp.nan))
    # gaussian_gated_mean
    with pytest.raises(ValueError, match=r"cov must have shape \(5, 5\)"):
        eg.gaussian_gated_mean(w, np.eye(4))
    with pytest.raises(ValueError, match="w must satisfy"):
        eg.gaussian_gated_mean(jnp.zeros(5), np.eye(5))
    # empirical_gate_probability
    with pytest.raises(ValueError, match="w must be a single weight vector"):
        bg.empirical_gate_probability(jnp.stack([w, w]), x, 0)
    with pytest.raises(ValueError, match="i must satisfy 0 <= i < n = 5"):
        bg.empirical_gate_probability(w, x, 5)
    with pytest.raises(ValueError, match="i must be an integer >= 0"):
        bg.empirical_gate_probability(w, x, -1)
    with pytest.raises(TypeError, match="i must be an integer"):
        bg.empirical_gate_probability(w, x, 1.0)
    with pytest.raises(ValueError, match="bins must be an integer >= 1"):
        bg.empirical_gate_probability(w, x, 0, bins=0)
    # gaussian_gate_probability
    sigma = _toeplitz(5, 0.5)
    with pytest.raises(ValueError, match="w must be a single weight vector"):
        eg.gaussian_gate_probability(jnp.stack([w, w]), sigma, 0, 1.0)
    with pytest.raises(ValueError, match=r"cov must have shape \(5, 5\)"):
        eg.gaussian_gate_probability(w, sigma[:4, :4], 0, 1.0)
    with pytest.raises(ValueError, match="i must satisfy"):
        eg.gaussian_gate_probability(w, sigma, 7, 1.0)
    with pytest.raises(ValueError, match=r"cov\[i, i\] must be positive"):
        eg.gaussian_gate_probability(w, np.zeros((5, 5)), 0, 1.0)
    with pytest.raises(ValueError, match="zero conditional variance"):
        eg.gaussian_gate_probability(jnp.eye(5)[0], np.eye(5), 0, 1.0)
    with pytest.raises(TypeError, match="x must be a real floating-point array"):
        eg.gaussian_gate_probability(w, sigma, 0, jnp.asarray([True]))


# ----------------------------------------------------------------------------- exact Ising chain
def _ising_enumeration(J, n):
    """Every configuration of the periodic chain with its probability (brute force, small n)."""
    import itertools

    x = np.array(list(itertools.product([-1.0, 1.0], repeat=n)))
    energy = (x * np.roll(x, -1, axis=1)).sum(1)
    p = np.exp(J * energy)
    return x, p / p.sum()


@pytest.mark.parametrize("J", [0.0, 0.4, 1.5])
def test_ising_preactivation_law_matches_enumeration(J):
    n, i = 9, 3
    w = np.array([3, -1, 0, 2, 5, -4, 1, 1, -2], dtype=float)
    x, p = _ising_enumeration(J, n)
    h = x @ w
    given = x[:, i] == 1
    values = np.unique(h[given])
    probs = np.array([p[given & (h == v)].sum() for v in values]) / p[given].sum()
    law = eg.ising_preactivation_law(J, w, i)
    np.testing.assert_array_equal(law.values, values.astype(np.int64))
    np.testing.assert_allclose(law.prob, probs, rtol=0, atol=1e-14)
    assert abs(law.prob.sum() - 1) < 1e-14
    # the gated mean E[1(h >= 0) X] (ties count as active) for every entry
    expected = ((h >= 0)[:, None] * x * p[:, None]).sum(0)
    np.testing.assert_allclose(eg.ising_gated_mean(J, w), expected, rtol=0, atol=1e-14)


def test_ising_conditional_mean_is_the_exact_correlation():
    # w = e_j: E[X_j | X_0 = 1] = E[X_0 X_j], the closed-form correlation of the periodic chain
    J, n = 0.7, 40
    corr = data.ising_correlation(J, n, np.arange(n))
    for j in (1, 7, 20, 39):
        law = eg.ising_preactivation_law(J, np.eye(n)[j], 0)
        assert abs(law.prob @ law.values - corr[j]) < 1e-13
    # independent spins (J = 0): <w, X> given X_0 = 1 is w_0 plus a sum of independent +-w_j
    law = eg.ising_preactivation_law(0.0, [2, 1, 1], 0)
    np.testing.assert_array_equal(law.values, [0, 2, 4])
    np.testing.assert_allclose(law.prob, [0.25, 0.5, 0.25], atol=1e-15)


def test_ising_exact_functions_validate():
    with pytest.raises(ValueError, match="J must be non-negative"):
        eg.ising_preactivation_law(-0.1, [1, 1], 0)
    with pytest.raises(ValueError, match="J must be finite"):
        eg.ising_gated_mean(math.inf, [1, 1])
    with pytest.raises(ValueError, match="w must have integer entries"):
        eg.ising_preactivation_law(0.5, [1.0, 0.5], 0)
    with pytest.raises(ValueError, match="w must have integer entries"):
        eg.ising_gated_mean(0.5, [1.0, np.nan])
    with pytest.raises(ValueError, match="w must be a single weight vector"):
        eg.ising_preactivation_law(0.5, [[1, 1], [1, 1]], 0)
    with pytest.raises(ValueError, match="w must be a single weight vector"):
        eg.ising_gated_mean(0.5, [1])
    with pytest.raises(ValueError, match=r"sum \|w_j\| <= 1000000"):
        eg.ising_gated_mean(0.5, [10**6, 1])
    with pytest.raises(ValueError, match="i must satisfy 0 <= i < n = 2"):
        eg.ising_preactivation_law(0.5, [1, 1], 2)
    with pytest.raises(TypeError, match="i must be an integer"):
        eg.ising_preactivation_law(0.5, [1, 1], 0.0)
    with pytest.raises(TypeError, match="w must be a real floating-point array"):
        eg.ising_preactivation_law(0.5, np.array([True, False]), 0)


# ----------------------------------------------------------------------------- elliptical data
@pytest.mark.slow
def test_elliptical_gated_mean_closed_form_and_gaussian_case():
    sigma = _toeplitz(6, 0.6)
    w = np.array([0.3, -1.0, 0.5, 0.2, 0.0, 0.7])
    # C = sqrt(2/pi) is the Gaussian law: the Stein closed form
    np.testing.assert_allclose(
        eg.elliptical_gated_mean(w, sigma, SQ), eg.gaussian_gated_mean(w, sigma), rtol=1e-14, atol=0
    )
    got = np.asarray(eg.elliptical_gated_mean(w, sigma, 0.5))
    expected = 0.25 * sigma @ w / math.sqrt(w @ sigma @ w)
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=0)
    # Monte Carlo on a multivariate t (nu = 5, unit variance): C = E|T| sqrt((nu-2)/nu)
    nu = 5.0
    k1, k2 = jax.random.split(jax.random.key(11))
    z = np.asarray(jax.random.normal(k1, (400_000, 6))) @ np.linalg.cholesky(sigma).T
    g = np.asarray(jax.random.gamma(k2, nu / 2, (400_000, 1)))
    x = z * np.sqrt((nu - 2) / (2 * g))
    c = (
        math.sqrt((nu - 2) / nu)
        * 2
        * math.sqrt(nu)
        * math.gamma((nu + 1) / 2)
        / (math.sqrt(math.pi) * (nu - 1) * math.gamma(nu / 2))
    )
    per = ((x @ w) >= 0)[:, None] * x
    z_score = np.abs(per.mean(0) - np.asarray(eg.elliptical_gated_mean(w, sigma, c))) / (per.std(0) / math.sqrt(len(x)))
    assert z_score.max() < 5, z_score


def test_elliptical_gated_mean_validates():
    sigma = _toeplitz(3, 0.5)
    with pytest.raises(ValueError, match=r"mean_abs must lie in \(0.0, 1.0\]"):
        eg.elliptical_gated_mean([1.0, 0.0, 0.0], sigma, 0.0)
    with pytest.raises(ValueError, match=r"mean_abs must lie in \(0.0, 1.0\]"):
        eg.elliptical_gated_mean([1.0, 0.0, 0.0], sigma, 1.2)
    with pytest.raises(ValueError, match="cov must have shape"):
        eg.elliptical_gated_mean([1.0, 0.0], sigma, 0.5)
