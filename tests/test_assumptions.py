"""Tests of the measurable assumptions A1–A3 (paper §3.1)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from localization import data
from localization.experiments import amplifier as AX
from localization.theory import Amplifier, integrate_effective
from localization.theory import assumptions as A
from localization.theory import binned_discrepancies as B

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


@pytest.mark.slow
def test_a1_kur_converged_and_positive():
    cop = A.gaussian_copula(data.Kur(2.0, 10.0), 8)
    d = [A.a1_discrepancy_copula(cop, hermite_order=o) for o in (60, 120)]
    assert d[0] == pytest.approx(d[1], abs=1e-7) and d[1] > 0.02
    # the NumPy transform equals the library's sampler transform
    z = np.linspace(-8, 8, 101)
    from localization.data import marginals as _marginals

    np.testing.assert_allclose(cop.transform(z), _marginals.kur_transform(jnp.asarray(z), 10.0), rtol=1e-13)


@pytest.mark.slow
def test_a1_binned_samples(samples):
    assert B.a1_discrepancy_samples(samples["gauss"]) < 0.04  # exact value 0; noise/binning only
    assert B.a1_discrepancy_samples(samples["ising"]) < 0.04  # exact value 0 (bins are the atoms)
    exact = A.a1_discrepancy(data.NLGP(2.0, 1.1), N)
    assert B.a1_discrepancy_samples(samples["nlgp"]) == pytest.approx(exact, abs=0.03)


@pytest.mark.slow
def test_a2_exact_cases_and_conditional_monte_carlo():
    w = np.asarray(jax.random.normal(jax.random.key(1), (N,), dtype=jnp.float64))
    assert AX.a2_discrepancy(data.Gaussian(2.0), N, w) == 0.0
    assert AX.a2_discrepancy(data.Ising(0.7), N, w) == 0.0
    model = data.Gaussian(2.0)
    cop = A.gaussian_copula(model, N)
    d = AX.a2_discrepancy_copula(jax.random.key(3), cop, model.covariance(N), w, nodes=12, num=2000)
    assert d < 0.05  # exact 0; Monte Carlo noise floor


def test_a2_binned_samples(samples):
    w = np.asarray(jax.random.normal(jax.random.key(4), (N,), dtype=jnp.float64))
    assert B.a2_discrepancy_samples(samples["gauss"], w) < 0.05
    assert B.a2_discrepancy_samples(samples["ising"], w) < 0.05


@pytest.mark.slow
def test_lindeberg_ratio():
    sigma = data.Gaussian(2.0).covariance(N)
    e = np.zeros(N)
    e[4] = -3.0
    assert float(A.lindeberg_ratio(e, sigma)) == pytest.approx(1.0, rel=1e-14)
    assert float(A.lindeberg_ratio(np.ones(N), np.eye(N))) == pytest.approx(1 / N, rel=1e-14)
    r = A.lindeberg_ratio(np.ones((2, 3, N)), sigma)
    assert r.shape == (2, 3)


@pytest.mark.slow
def test_lindeberg_ratio_flat_field_and_cancellation():
    # flat field of a circulant: 1 / (N lambda(0)), lambda(0) the row sum (1/N only for the identity)
    for xi in (0.7, 3.0):
        sigma = np.asarray(data.Gaussian(xi).covariance(N))
        lam0 = sigma[0].sum()
        assert float(A.lindeberg_ratio(np.ones(N), sigma)) == pytest.approx(1 / (N * lam0), rel=1e-13)
        assert 1 / (N * lam0) < 1 / N
    # cancelling neighbours: w = e0 - e1 gives 1 / (2 (1 - Sigma_01)), above 1 for Sigma_01 > 1/2
    sigma = np.asarray(data.Gaussian(3.0).covariance(N))
    w = np.zeros(N)
    w[0], w[1] = 1.0, -1.0
    ratio = float(A.lindeberg_ratio(w, sigma))
    assert ratio == pytest.approx(1 / (2 * (1 - sigma[0, 1])), rel=1e-13)
    assert sigma[0, 1] > 0.5 and ratio > 1
    # the bounds 1 / (N lambda_max) <= ratio <= 1 / lambda_min on random fields
    lam = np.linalg.eigvalsh(sigma)
    r = np.asarray(
        A.lindeberg_ratio(np.asarray(jax.random.normal(jax.random.key(3), (256, N), dtype=jnp.float64)), sigma)
    )
    assert np.all(r >= 1 / (N * lam[-1]) * (1 - 1e-12)) and np.all(r <= 1 / lam[0] * (1 + 1e-12))


@pytest.mark.slow
def test_a3_along_trajectory():
    s0, s1 = data.Gaussian(0.7).covariance(N), data.Gaussian(2.0).covariance(N)
    w0 = 0.01 * np.asarray(jax.random.normal(jax.random.key(5), (2, N), dtype=jnp.float64))
    traj = integrate_effective(w0, Amplifier.binary(), s0, s1, lr=0.1, steps=30, checkpoints=4)
    r = A.a3_along_trajectory(traj, s1)
    assert r.shape == (2, 4)
    np.testing.assert_allclose(r[1, 2], A.lindeberg_ratio(traj.weights[1, 2], s1), rtol=1e-14)
    lam = np.linalg.eigvalsh(np.asarray(s1))
    assert np.all((r >= 1 / (N * lam[-1]) * (1 - 1e-12)) & (r <= 1 / lam[0] * (1 + 1e-12)))


def test_validation():
    w = np.ones(N)
    with pytest.raises(ValueError, match="i must be"):
        A.a1_discrepancy(data.NLGP(2.0, 1.1), N, i=N)
    with pytest.raises(TypeError, match="model must be a Gaussian-copula"):
        A.a1_discrepancy(data.StudentT(2.0, 3.0), N)
    with pytest.raises(ValueError, match="n must"):
        A.a1_discrepancy(data.Gaussian(2.0), 1)
    with pytest.raises(ValueError, match="x must have shape"):
        B.a1_discrepancy_samples(np.ones((10, N)))
    with pytest.raises(ValueError, match="bins"):
        B.a1_discrepancy_samples(np.ones((100, N)), bins=1)
    with pytest.raises(ValueError, match="w must have last axis"):
        B.a2_discrepancy_samples(np.ones((100, N)), np.ones(3))
    with pytest.raises(TypeError, match="key"):
        AX.a2_discrepancy(data.NLGP(2.0, 1.1), N, w, key=0)
    with pytest.raises(ValueError, match="key must be a JAX PRNG key for NLGP"):
        AX.a2_discrepancy(data.NLGP(2.0, 1.1), N, w)
    with pytest.raises(ValueError, match="cov must have shape"):
        AX.a2_discrepancy_copula(jax.random.key(0), A.gaussian_copula(data.NLGP(2.0, 1.1), N), np.eye(3), w)
    with pytest.raises(ValueError, match="w must be a single"):
        AX.a2_discrepancy_copula(
            jax.random.key(0), A.gaussian_copula(data.NLGP(2.0, 1.1), N), np.eye(N), np.ones((2, N))
        )
    with pytest.raises(ValueError, match="nodes"):
        AX.a2_discrepancy(data.NLGP(2.0, 1.1), N, w, key=jax.random.key(0), nodes=1)
    with pytest.raises(ValueError, match="cov must be a square"):
        A.lindeberg_ratio(w, np.ones((N, 3)))
    with pytest.raises(ValueError, match="weights must have last axis"):
        A.lindeberg_ratio(np.ones(3), np.eye(N))
    with pytest.raises(TypeError, match="trajectory"):
        A.a3_along_trajectory(np.ones(N), np.eye(N))


# ----------------------------------------------------------------------------- finite laws, exact
def _pulses(n, lengths):
    return np.array([np.where((np.arange(n) - s) % n < length, 1.0, -1.0) for length in lengths for s in range(n)])


def test_discrepancies_finite_sign_symmetric_pm1_law_is_exact():
    # pulses and their sign flips: a sign-symmetric +-1 law, for which A1 and A2 hold exactly
    pulses = _pulses(10, range(2, 5))
    atoms = np.concatenate([pulses, -pulses])
    prob = np.full(len(atoms), 1 / len(atoms))
    w = np.random.default_rng(0).normal(size=10)
    for i in (0, 3):
        d1, d2 = A.discrepancies_finite(atoms, prob, w, i)
        assert d1 < 1e-13 and d2 < 1e-13
    # repeating atoms (with split probabilities) changes nothing
    d1, d2 = A.discrepancies_finite(np.concatenate([atoms, atoms]), np.full(2 * len(atoms), 0.5 / len(atoms)), w)
    assert d1 < 1e-13 and d2 < 1e-13


def test_discrepancies_finite_detects_failures():
    # without the sign flip: X_i still takes two values (A1 holds: any function on two points is
    # affine) but the conditional variance depends on X_i (A2 fails)
    pulses = _pulses(10, range(2, 5))
    w = np.cos(2 * np.pi * np.arange(10) / 10 + 0.3)
    d1, d2 = A.discrepancies_finite(pulses, np.full(len(pulses), 1 / len(pulses)), w)
    assert d1 < 1e-13 and d2 > 0.05
    # a three-valued coordinate with a non-linear conditional mean: X_1 = X_0^2 - 2/3, X_0 in {-1, 0, 1}
    atoms = np.array([[-1.0, 1 / 3, 1.0], [0.0, -2 / 3, -1.0], [1.0, 1 / 3, 1.0], [0.0, -2 / 3, 1.0]])
    prob = np.array([1 / 3, 1 / 6, 1 / 3, 1 / 6])
    d1, d2 = A.discrepancies_finite(atoms, prob, [0.0, 1.0, 1.0])
    # E[X_1 | X_0] = X_0^2 - 2/3 is orthogonal to X_0: all of it is missed by A1 (D1 = 1 on coordinate 1;
    # coordinate 2 has E[X_2 | X_0] = 1 - 1(X_0 = 0), mean 2/3 removed: also even in X_0)
    assert abs(d1 - 1.0) < 1e-12
    assert d2 > 0.1


@pytest.mark.slow
def test_discrepancies_finite_matches_binned_estimate():
    # the binned sample estimator (one bin per atom of X_i) agrees with the exact value up to noise
    pulses = _pulses(10, range(2, 5))
    prob = np.full(len(pulses), 1 / len(pulses))
    w = np.cos(2 * np.pi * np.arange(10) / 10 + 0.3)
    exact = A.discrepancies_finite(pulses, prob, w)
    idx = np.asarray(jax.random.randint(jax.random.key(3), (200_000,), 0, len(pulses)))
    assert abs(B.a2_discrepancy_samples(pulses[idx], w) - exact[1]) < 0.02


def test_discrepancies_finite_validates():
    atoms = np.array([[1.0, -1.0], [-1.0, 1.0]])
    prob = np.array([0.5, 0.5])
    with pytest.raises(ValueError, match="support must have shape"):
        A.discrepancies_finite(atoms[:1], prob[:1], [1.0, 1.0])
    with pytest.raises(ValueError, match=r"prob must have shape \(2,\)"):
        A.discrepancies_finite(atoms, [1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="prob must be non-negative and sum to 1"):
        A.discrepancies_finite(atoms, [0.7, 0.7], [1.0, 1.0])
    with pytest.raises(ValueError, match="prob must be non-negative and sum to 1"):
        A.discrepancies_finite(atoms, [1.5, -0.5], [1.0, 1.0])
    with pytest.raises(ValueError, match="support and prob must be finite"):
        A.discrepancies_finite(np.array([[1.0, np.nan], [-1.0, 1.0]]), prob, [1.0, 1.0])
    with pytest.raises(ValueError, match="w must have last axis of length 2"):
        A.discrepancies_finite(atoms, prob, [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"i must be an integer in \[0, 1\]"):
        A.discrepancies_finite(atoms, prob, [1.0, 1.0], i=2)
    with pytest.raises(ValueError, match="coordinate i = 0 is constant"):
        A.discrepancies_finite(np.array([[1.0, -1.0], [1.0, 1.0]]), prob, [0.0, 1.0])
    with pytest.raises(ValueError, match="positive A2 variance"):
        A.discrepancies_finite(atoms, prob, [1.0, 0.0])
    with pytest.raises(TypeError, match="support must be a real floating-point array"):
        A.discrepancies_finite(np.array([[True, False], [False, True]]), prob, [1.0, 1.0])
