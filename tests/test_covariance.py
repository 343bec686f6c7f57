"""Tests of the periodised squared-exponential covariance (localization.data.spectral)."""

import math

import numpy as np
import pytest

from localization import data
from localization.data import spectral as _cov

XIS = [0.05, 0.3, 1.0, 3.0, 15.0, 100.0, 1000.0]
SHAPES = [2, 3, 40, (5, 7)]


@pytest.mark.parametrize("n", SHAPES)
@pytest.mark.parametrize("xi", XIS)
def test_psd_unit_diagonal_symmetric(xi, n):
    C = data.covariance(xi, n)
    N = math.prod(n) if isinstance(n, tuple) else n
    assert C.shape == (N, N) and C.dtype == np.float64
    np.testing.assert_allclose(np.diag(C), 1.0, atol=1e-14)
    np.testing.assert_array_equal(C, C.T)
    # eigvalsh rounding is ~ N eps ||C||; true eigenvalues are >= 0 exactly
    assert np.linalg.eigvalsh(C).min() >= -1e-13 * N


@pytest.mark.parametrize("n", SHAPES)
@pytest.mark.parametrize("xi", [0.3, 3.0, 1000.0])
def test_sqrt_is_symmetric_root(xi, n):
    C = data.covariance(xi, n)
    R = data.covariance_sqrt(xi, n)
    np.testing.assert_allclose(R, R.T, atol=1e-15)
    np.testing.assert_allclose(R @ R, C, atol=1e-13)
    assert np.all(np.isfinite(R))


@pytest.mark.parametrize("L", [2, 3, 7, 40])
@pytest.mark.parametrize("xi", XIS)
def test_dual_eigenvalues_match_fft_of_row(xi, L):
    # Poisson-dual eigenvalues (positive by construction) equal the DFT of the direct-sum row
    lam = _cov.eigenvalues(xi, L)
    assert np.all(lam >= 0)
    np.testing.assert_allclose(lam.sum(), L, rtol=1e-14)
    np.testing.assert_allclose(np.fft.fft(_cov.kernel_row(xi, L)).real, lam, atol=1e-13 * L)


@pytest.mark.parametrize("xi", [0.3, 1.0, 2.0, 3.0, 5.0])
def test_agrees_with_min_distance_kernel_for_small_xi(xi):
    L = 40
    diff = np.abs(data.covariance(xi, L) - data.min_distance_covariance(xi, L)).max()
    # difference is dominated by the nearest image: <= 2 exp(-(L/2)^2/xi^2) (+ rounding)
    assert diff <= 2 * math.exp(-((L / 2) ** 2) / xi**2) + 1e-15, diff


def test_min_distance_kernel_is_not_psd_for_large_xi():
    # reference-settings pitfall: smallest eigenvalue about -0.43 at L = 40, xi = 15
    ev = np.linalg.eigvalsh(data.min_distance_covariance(15.0, 40)).min()
    assert ev < -0.4
    assert np.linalg.eigvalsh(data.covariance(15.0, 40)).min() > -1e-12


def test_grid_is_kronecker_product_and_translation_invariant():
    C = data.covariance(2.0, (5, 7))
    np.testing.assert_allclose(C, np.kron(data.covariance(2.0, 5), data.covariance(2.0, 7)), atol=1e-15)
    # translation on the torus: shift both indices by (1, 2)
    idx = np.arange(35).reshape(5, 7)
    perm = np.roll(np.roll(idx, 1, 0), 2, 1).ravel()
    np.testing.assert_allclose(C[np.ix_(perm, perm)], C, atol=1e-15)


def test_circulant_1d():
    C = data.covariance(3.0, 40)
    for s in (1, 7, 39):
        np.testing.assert_allclose(np.roll(np.roll(C, s, 0), s, 1), C, atol=1e-15)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_xi_value(bad):
    with pytest.raises(ValueError, match="xi"):
        data.covariance(bad, 10)
    with pytest.raises(ValueError, match="xi"):
        data.covariance_sqrt(bad, 10)


@pytest.mark.parametrize("bad", ["1", None, [1.0], True])
def test_bad_xi_type(bad):
    with pytest.raises(TypeError, match="xi"):
        data.covariance(bad, 10)


@pytest.mark.parametrize("bad", [1, 0, -3, (1, 5), (5, 1)])
def test_bad_n_value(bad):
    with pytest.raises(ValueError, match="n"):
        data.covariance(1.0, bad)


@pytest.mark.parametrize("bad", [10.0, "10", (5.0, 5), None])
def test_bad_n_type(bad):
    with pytest.raises(TypeError, match="n"):
        data.covariance(1.0, bad)


@pytest.mark.parametrize("L", [2, 3, 7, 40, 41])
def test_real_fourier_basis_is_orthonormal_and_diagonalises_every_circulant(L):
    Q, freq = _cov.real_fourier_basis(L)
    assert Q.shape == (L, L) and freq.shape == (L,)
    np.testing.assert_allclose(Q.T @ Q, np.eye(L), atol=1e-13)
    assert freq.min() == 0 and freq.max() == L // 2
    # an arbitrary symmetric circulant (not a kernel of ours) is diagonal in Q with its DFT eigenvalues
    row = np.random.default_rng(L).normal(size=L)
    row = 0.5 * (row + np.roll(row[::-1], 1))
    D = Q.T @ _cov.circulant(row) @ Q
    np.testing.assert_allclose(D, np.diag(np.fft.fft(row).real[freq]), atol=1e-12)


@pytest.mark.parametrize("n", SHAPES)
@pytest.mark.parametrize("xi", XIS)
def test_spectral_amplitudes_reproduce_the_covariance(xi, n):
    shape = n if isinstance(n, tuple) else (n,)
    a = _cov.grid_amplitudes(xi, shape)
    Qs = np.ones((1, 1))
    for L in shape:
        Qs = np.kron(Qs, _cov.real_fourier_basis(L)[0])
    assert a.shape == (math.prod(shape),) and np.all(a >= 0)
    np.testing.assert_allclose(Qs @ np.diag(a**2) @ Qs.T, data.covariance(xi, n), atol=1e-13)


@pytest.mark.parametrize("n", SHAPES)
@pytest.mark.slow
def test_public_fourier_basis_and_amplitudes_give_the_sampler_covariance(n):
    Q, a = data.fourier_basis(n), data.spectral_amplitudes(2.0, n)
    N = math.prod(n) if isinstance(n, tuple) else n
    assert Q.shape == (N, N) and a.shape == (N,)
    np.testing.assert_allclose(Q @ np.diag(a**2) @ Q.T, data.covariance(2.0, n), atol=1e-13)
    # the samplers use exactly these amplitudes: float64 Gaussian rows have this covariance
    import jax

    g = np.asarray(jax.random.normal(jax.random.key(0), (3, N), np.float64))
    shape = n if isinstance(n, tuple) else (n,)
    amps = jax.numpy.asarray(data.spectral.grid_amplitudes(2.0, shape))
    z = np.asarray(data.spectral.to_sites(jax.numpy.asarray(g) * amps, shape))
    np.testing.assert_allclose(z, (g * a) @ Q.T, atol=1e-12)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan])
def test_spectral_amplitudes_bad_xi(bad):
    with pytest.raises(ValueError, match="xi"):
        data.spectral_amplitudes(bad, 10)


@pytest.mark.parametrize("bad", [1, 0, (3, 1)])
def test_fourier_basis_bad_n(bad):
    with pytest.raises(ValueError, match="n"):
        data.fourier_basis(bad)
