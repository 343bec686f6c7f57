"""Tests of the measurable assumptions A1–A3 (paper §3.1)."""


import jax
import jax.numpy as jnp
import numpy as np
import pytest

from localization import data
from localization.theory import Amplifier, integrate_effective
from localization.theory import assumptions as A

N = 12


@pytest.fixture(scope="module")
def samples():
    # one Gaussian draw, transformed: NLGP(g) = erf(g Z)/𝒵(g), and sign(Z) (a sign-symmetric ±1 law,
    # for which A1 and A2 hold exactly, like Ising; cheaper to draw than the Ising chain)
    z = np.asarray(data.Gaussian(2.0).sample(jax.random.key(0), 60_000, N))
    g = 1.1
    return {
        "gauss": z,
        "nlgp": np.asarray(jax.scipy.special.erf(g * z)) / float(data.nlgp_normaliser(g)),
        "ising": np.sign(z),
    }


def test_a1_exact_cases_are_zero():
    assert A.a1_discrepancy(data.Gaussian(2.0), N) == 0.0
    assert A.a1_discrepancy(data.Ising(0.7), N) == 0.0
    # the quadrature path agrees for the Gaussian copula (identity transform, Gauss–Hermite inner rule)
    cop = A.gaussian_copula(data.Gaussian(2.0), N)._replace(conditional_mean=None)
    assert A.a1_discrepancy_copula(cop) < 1e-10
    assert A.a1_discrepancy(data.NLGP(2.0, 1e-3), N) < 1e-5  # g -> 0: Gaussian limit


def test_a1_nlgp_closed_form_inner_mean_matches_hermite():
    cop = A.gaussian_copula(data.NLGP(2.0, 1.1), N)
    d_closed = A.a1_discrepancy_copula(cop)
    d_gh = A.a1_discrepancy_copula(cop._replace(conditional_mean=None), hermite_order=160)
    assert d_closed == pytest.approx(d_gh, abs=1e-8)
    assert 0.1 < d_closed < 0.3  # A1 visibly violated at moderate gain


def test_a1_kur_converged_and_positive():
    cop = A.gaussian_copula(data.Kur(2.0, 10.0), 8)
    d = [A.a1_discrepancy_copula(cop, hermite_order=o) for o in (60, 120)]
    assert d[0] == pytest.approx(d[1], abs=1e-7) and d[1] > 0.02
    # the NumPy transform equals the library's sampler transform
    z = np.linspace(-8, 8, 101)
    from localization import _marginals

    np.testing.assert_allclose(cop.transform(z), _marginals.kur_transform(jnp.asarray(z), 10.0), rtol=1e-13)


def test_a1_binned_samples(samples):
    assert A.a1_discrepancy_samples(samples["gauss"]) < 0.04  # exact value 0; noise/binning only
    assert A.a1_discrepancy_samples(samples["ising"]) < 0.04  # exact value 0 (bins are the atoms)
    exact = A.a1_discrepancy(data.NLGP(2.0, 1.1), N)
    assert A.a1_discrepancy_samples(samples["nlgp"]) == pytest.approx(exact, abs=0.03)


def test_a2_exact_cases_and_conditional_monte_carlo():
    w = np.asarray(jax.random.normal(jax.random.key(1), (N,), dtype=jnp.float64))
    assert A.a2_discrepancy(data.Gaussian(2.0), N, w, key=jax.random.key(2)) == 0.0
    assert A.a2_discrepancy(data.Ising(0.7), N, w, key=jax.random.key(2)) == 0.0
    model = data.Gaussian(2.0)
    cop = A.gaussian_copula(model, N)
    d = A.a2_discrepancy_copula(cop, model.covariance(N), w, key=jax.random.key(3), nodes=12, samples=2000)
    assert d < 0.05  # exact 0; Monte Carlo noise floor


def test_a2_binned_samples(samples):
    w = np.asarray(jax.random.normal(jax.random.key(4), (N,), dtype=jnp.float64))
    assert A.a2_discrepancy_samples(samples["gauss"], w) < 0.05
    assert A.a2_discrepancy_samples(samples["ising"], w) < 0.05


def test_lindeberg_ratio():
    sigma = data.Gaussian(2.0).covariance(N)
    e = np.zeros(N)
    e[4] = -3.0
    assert float(A.lindeberg_ratio(e, sigma)) == pytest.approx(1.0, rel=1e-14)
    assert float(A.lindeberg_ratio(np.ones(N), np.eye(N))) == pytest.approx(1 / N, rel=1e-14)
    r = A.lindeberg_ratio(np.ones((2, 3, N)), sigma)
    assert r.shape == (2, 3)


def test_a3_along_trajectory():
    s0, s1 = data.Gaussian(0.7).covariance(N), data.Gaussian(2.0).covariance(N)
    w0 = 0.01 * np.asarray(jax.random.normal(jax.random.key(5), (2, N), dtype=jnp.float64))
    traj = integrate_effective(w0, Amplifier.binary(), s0, s1, lr=0.1, steps=30, checkpoints=4)
    r = A.a3_along_trajectory(traj, s1)
    assert r.shape == (2, 4)
    np.testing.assert_allclose(r[1, 2], A.lindeberg_ratio(traj.weights[1, 2], s1), rtol=1e-14)
    assert np.all((r > 0) & (r <= 1))


def test_validation():
    w = np.ones(N)
    with pytest.raises(ValueError, match="i must be"):
        A.a1_discrepancy(data.NLGP(2.0, 1.1), N, i=N)
    with pytest.raises(TypeError, match="model must be a Gaussian-copula"):
        A.a1_discrepancy(data.StudentT(2.0, 3.0), N)
    with pytest.raises(ValueError, match="n must"):
        A.a1_discrepancy(data.Gaussian(2.0), 1)
    with pytest.raises(ValueError, match="x must have shape"):
        A.a1_discrepancy_samples(np.ones((10, N)))
    with pytest.raises(ValueError, match="bins"):
        A.a1_discrepancy_samples(np.ones((100, N)), bins=1)
    with pytest.raises(ValueError, match="w must have last axis"):
        A.a2_discrepancy_samples(np.ones((100, N)), np.ones(3))
    with pytest.raises(TypeError, match="key"):
        A.a2_discrepancy(data.NLGP(2.0, 1.1), N, w, key=0)
    with pytest.raises(ValueError, match="sigma must have shape"):
        A.a2_discrepancy_copula(A.gaussian_copula(data.NLGP(2.0, 1.1), N), np.eye(3), w, key=jax.random.key(0))
    with pytest.raises(ValueError, match="w must be a single"):
        A.a2_discrepancy_copula(A.gaussian_copula(data.NLGP(2.0, 1.1), N), np.eye(N), np.ones((2, N)),
                                key=jax.random.key(0))
    with pytest.raises(ValueError, match="nodes"):
        A.a2_discrepancy(data.NLGP(2.0, 1.1), N, w, key=jax.random.key(0), nodes=1)
    with pytest.raises(ValueError, match="sigma must be a square"):
        A.lindeberg_ratio(w, np.ones((N, 3)))
    with pytest.raises(ValueError, match="weights must have last axis"):
        A.lindeberg_ratio(np.ones(3), np.eye(N))
    with pytest.raises(TypeError, match="trajectory"):
        A.a3_along_trajectory(np.ones(N), np.eye(N))
