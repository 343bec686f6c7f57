"""The FFT map to the sites (spectral.synthesize_axis, spectral.to_sites(method="fft")) and the method choice.

Strong test: the FFT path is a linear map of the white noise; applied to every unit vector (an
enumeration) it gives the exact covariance, which must equal C to 1e-10 in float64. Monte Carlo
tests use tolerances fixed from the sample size before seeing the result: 6 standard errors, so a
correct sampler fails one entry with probability < 2e-9 each (< 1e-5 over all entries checked).
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from localization import data
from localization.data import spectral

KEY = jax.random.key(0)
SHAPES = [(2,), (3,), (7,), (8,), (40,), (4, 6), (3, 5, 4), (7, 2)]
# Monte Carlo cases: ring N = 7 (odd) and 8 (even), grids 4 x 6 and 3 x 5 x 4, each dtype twice
MC_CASES = [((7,), jnp.float64), ((8,), jnp.float32), ((4, 6), jnp.float32), ((3, 5, 4), jnp.float64)]


def _n(shape):
    return shape[0] if len(shape) == 1 else shape


@pytest.mark.parametrize("L", [2, 3, 4, 7, 8, 41])
@pytest.mark.slow
def test_synthesize_axis_is_the_product_with_the_real_basis(L):
    """One axis, float64: irfft of the half spectrum of synthesize_axis's docstring = h @ Q^T (to rounding)."""
    Q = spectral.real_fourier_basis(L)[0]
    h = np.random.default_rng(L).normal(size=(5, L))
    z = spectral.synthesize_axis(jnp.asarray(h), 1)
    assert z.shape == (5, L) and z.dtype == jnp.float64
    np.testing.assert_allclose(np.asarray(z), h @ Q.T, rtol=0, atol=1e-13)
    # along another axis (the transposed problem)
    zt = spectral.synthesize_axis(jnp.asarray(h.T), 0)
    np.testing.assert_allclose(np.asarray(zt), (h @ Q.T).T, rtol=0, atol=1e-13)


@pytest.mark.parametrize("dtype, atol", [(jnp.float64, 1e-12), (jnp.float32, 3e-6)])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.slow
def test_fft_and_dense_give_the_same_map(shape, dtype, atol):
    """The two methods are one linear map: same output for the same coefficients, in either dtype."""
    h = jnp.asarray(np.random.default_rng(1).normal(size=(6, math.prod(shape))), dtype)
    dense = spectral.to_sites(h, shape, "dense")
    via_fft = spectral.to_sites(h, shape, "fft")
    assert via_fft.dtype == dtype and via_fft.shape == h.shape
    np.testing.assert_allclose(np.asarray(via_fft), np.asarray(dense), rtol=0, atol=atol)


@pytest.mark.parametrize(
    "shape, xi", [((7,), 0.7), ((8,), 3.0), ((256,), 3.0), ((4, 6), 0.7), ((3, 5, 4), 3.0), ((16, 9), 1.5)]
)
@pytest.mark.slow
def test_fft_path_has_exactly_the_covariance(shape, xi):
    """Exact, not Monte Carlo: Z = (G * a) M with M the FFT map; feeding G = each unit vector gives
    the rows of A = diag(a) M, and Cov Z = A^T A must equal C = covariance(xi, n) to 1e-10."""
    N = math.prod(shape)
    a = jnp.asarray(spectral.grid_amplitudes(xi, shape))
    A = np.asarray(spectral.to_sites(jnp.eye(N) * a, shape, "fft"))
    C = data.covariance(xi, _n(shape))
    assert np.max(np.abs(A.T @ A - C)) < 1e-10
    # unit diagonal: every site has variance 1
    assert np.max(np.abs(np.sum(A**2, axis=0) - 1.0)) < 1e-10


@pytest.mark.slow
def test_fft_path_float32_covariance_to_float32_rounding():
    shape = (4, 6)
    a = jnp.asarray(spectral.grid_amplitudes(2.0, shape), jnp.float32)
    A = np.asarray(spectral.to_sites(jnp.eye(24, dtype=jnp.float32) * a, shape, "fft"), np.float64)
    assert np.max(np.abs(A.T @ A - data.covariance(2.0, shape))) < 1e-5


@pytest.mark.parametrize("shape, dtype", MC_CASES)
@pytest.mark.slow
def test_fft_samples_have_the_covariance_monte_carlo(shape, dtype):
    """Empirical E[x x^T] of Gaussian(xi) sampled by the FFT path vs C: for Gaussian rows the entry
    x_i x_j has variance 1 + C_ij^2, so the standard error of the mean over ``num`` rows is
    sqrt((1 + C_ij^2) / num); every entry must be within 6 of them."""
    num, xi = 20_000, 1.5
    x = np.asarray(data.Gaussian(xi).sample(KEY, num, _n(shape), dtype, method="fft"), np.float64)
    assert x.shape == (num, math.prod(shape))
    C = data.covariance(xi, _n(shape))
    se = np.sqrt((1.0 + C**2) / num)
    z = np.abs(x.T @ x / num - C) / se
    assert z.max() < 6.0, f"max |z| = {z.max():.2f}"


@pytest.mark.parametrize("model", [data.NLGP(xi=2.0, gain=3.0), data.Kur(xi=2.0, k=10.0)], ids=["NLGP(3)", "Kur(10)"])
@pytest.mark.slow
def test_copulas_on_the_fft_path_keep_their_marginal(model):
    """Fourth moment of one coordinate law: the mean over sites of x_i^4 per row is iid over rows
    with mean E[X^4] (the exact marginal value); within 6 standard errors (finite: Kur(10) has
    moments of order < 10)."""
    num, shape = 20_000, (4, 6)
    x = np.asarray(model.sample(KEY, num, shape, method="fft"))
    per_row = np.mean(x**4, axis=1)
    se = per_row.std(ddof=1) / math.sqrt(num)
    assert abs(per_row.mean() - model.marginal.fourth_moment) < 6 * se


@pytest.mark.parametrize(
    "n, dtype",
    [
        (40, jnp.float64),
        (40, jnp.float32),
        (100, jnp.float64),
        (128, jnp.float32),
        ((6, 5), jnp.float64),
        ((30, 30), jnp.float32),
    ],
)
@pytest.mark.slow
def test_auto_is_dense_bit_for_bit_at_the_chapters_sizes(n, dtype):
    """The chapters' samples (N <= 128) must not change: "auto" runs the dense product there."""
    m = data.NLGP(xi=3.0, gain=10.0)
    auto = m.sample(KEY, 4, n, dtype)
    assert np.array_equal(np.asarray(auto), np.asarray(m.sample(KEY, 4, n, dtype, method="dense")))
    assert np.array_equal(np.asarray(auto), np.asarray(m.sample(KEY, 4, n, dtype, method="auto")))


@pytest.mark.slow
def test_auto_uses_the_fft_on_long_axes():
    L = spectral.FFT_MIN_LENGTH
    assert L > 128
    assert spectral.axis_methods((L - 1,), "auto") == ("dense",)
    assert spectral.axis_methods((L,), "auto") == ("fft",)
    assert spectral.axis_methods((L, 8), "auto") == ("fft", "dense")
    assert spectral.axis_methods((8, 8), "fft") == ("fft", "fft")
    m = data.Gaussian(3.0)
    auto = np.asarray(m.sample(KEY, 3, L))
    assert np.array_equal(auto, np.asarray(m.sample(KEY, 3, L, method="fft")))
    np.testing.assert_allclose(auto, np.asarray(m.sample(KEY, 3, L, method="dense")), rtol=0, atol=1e-12)


@pytest.mark.slow
def test_sampling_method_argument_reaches_tasks_and_jit():
    """A task draws its latent Gaussian through to_sites: its ``method`` argument reaches it, also under jit;
    the default is "auto" (dense at these sizes), with no state outside the call."""
    task = data.LengthscaleTask.of(data.NLGP, xi=(1.0, 3.0), gain=3.0)
    x_dense, y = task.sample(KEY, 8, (4, 6), method="dense")
    x_auto, y1 = task.sample(KEY, 8, (4, 6))
    x_fft, y2 = jax.jit(lambda k: task.sample(k, 8, (4, 6), method="fft"))(KEY)
    assert spectral.axis_methods((4, 6)) == ("dense", "dense")
    assert spectral.axis_methods((4, 6), "fft") == ("fft", "fft")
    assert np.array_equal(np.asarray(x_auto), np.asarray(x_dense))
    assert np.array_equal(np.asarray(y), np.asarray(y1)) and np.array_equal(np.asarray(y), np.asarray(y2))
    np.testing.assert_allclose(np.asarray(x_fft), np.asarray(x_dense), rtol=0, atol=1e-12)
    xb_dense, _ = task.sample_balanced(KEY, 6, (4, 6), method="dense")
    xb_fft, _ = task.sample_balanced(KEY, 6, (4, 6), method="fft")
    np.testing.assert_allclose(np.asarray(xb_fft), np.asarray(xb_dense), rtol=0, atol=1e-12)
    f = jax.jit(lambda k: data.Kur(2.0, 5.0).sample(k, 3, (4, 6), jnp.float32, method="fft"))
    out = f(KEY)
    assert out.shape == (3, 24) and out.dtype == jnp.float32 and bool(jnp.all(jnp.isfinite(out)))


@pytest.mark.parametrize("n", [16, (4, 6)])
@pytest.mark.slow
def test_every_model_samples_the_same_on_both_paths(n):
    """The method changes how, not what: every model gives the dense samples to rounding (float64);
    models without a spectral latent Gaussian (Ising, the pulse, the clone's own root) ignore it."""
    N = 16 if n == 16 else 24
    models = [
        data.Gaussian(2.0),
        data.NLGP(2.0, 3.0),
        data.Kur(2.0, 10.0),
        data.StudentT(2.0, 10.0),
        data.EllipseSurface(2.0, dim=N),
        data.RadialElliptical(2.0, dim=N),
        data.GaussianClone(data.NLGP(2.0, 3.0)),
    ]
    if n == 16:
        models += [data.RootedKur.of(2.0, 10.0, 16), data.Ising(0.7), data.SinglePulse(0.25, 0.5)]
    for m in models:
        dense = np.asarray(m.sample(KEY, 5, n, method="dense"))
        via_fft = np.asarray(m.sample(KEY, 5, n, method="fft"))
        np.testing.assert_allclose(via_fft, dense, rtol=0, atol=1e-11, err_msg=repr(m))


@pytest.mark.parametrize("bad", ["FFT", "", "sparse", 1, True, ("fft",), None])
def test_bad_method_raises(bad):
    with pytest.raises(ValueError, match=r"method must be one of \('auto', 'dense', 'fft'\)") as err:
        data.Gaussian(1.0).sample(KEY, 2, 8, method=bad)
    assert repr(bad) in str(err.value)
    with pytest.raises(ValueError, match="method"):
        data.LengthscaleTask.of(data.Gaussian, xi=(1.0, 2.0)).sample(KEY, 2, 8, method=bad)
    with pytest.raises(ValueError, match="method"):
        spectral.to_sites(jnp.zeros((1, 8)), (8,), bad)


@pytest.mark.parametrize("L", [1, 2, 7, 40])
def test_circulant_eigenvalues_diagonalise_the_circulant(L):
    """The eigenvalues of a symmetric circulant are the DFT of its first row, in the real Fourier basis
    ordered by ``freq``; the periodised kernel's are the Poisson series ``spectral.eigenvalues``."""
    row = np.asarray(spectral.kernel_row(2.0, L))
    lam = spectral.circulant_eigenvalues(row)
    assert lam.shape == (L,) and lam.dtype == np.float64
    np.testing.assert_allclose(lam, spectral.eigenvalues(2.0, L), rtol=0, atol=1e-12)
    if L > 1:
        q, freq = spectral.real_fourier_basis(L)
        np.testing.assert_allclose(q @ np.diag(lam[freq]) @ q.T, spectral.circulant(row), rtol=0, atol=1e-12)


def test_circulant_eigenvalues_validate_the_row():
    with pytest.raises(ValueError, match="row must be symmetric"):
        spectral.circulant_eigenvalues([1.0, 0.5, 0.2])
    with pytest.raises(ValueError, match="row must be a non-empty 1-D array"):
        spectral.circulant_eigenvalues(np.eye(3))
    with pytest.raises(ValueError, match="row must be finite"):
        spectral.circulant_eigenvalues([1.0, np.nan, np.nan])
    with pytest.raises(TypeError, match="row"):
        spectral.circulant_eigenvalues("abc")
