"""GaussianClone: same covariance as the source model, standard normal marginals."""

import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from localization import data
from localization.data import GaussianClone


@dataclass(frozen=True)
class _CovarianceOnly(data.DataModel):
    """Test models that define only a covariance (the clone needs nothing else)."""

    lengthscale_name = "xi"
    xi = 1.0
    marginal = data.GaussianMarginal()

    def _sample(self, key, num, shape, dtype, method):
        raise NotImplementedError("a covariance-only test model")


@dataclass(frozen=True)
class _AR1Circulant(_CovarianceOnly):
    """A stand-in source model: circulant covariance rho^d(i,j) (d periodic distance), unit diagonal."""

    rho: float = 0.6
    xi: float = 2.0

    def _covariance(self, shape):
        n = int(np.prod(shape))
        d = np.arange(n)
        d = np.minimum(d, n - d)
        row = self.rho**d
        return row[(np.arange(n)[None, :] - np.arange(n)[:, None]) % n]


def _sample_cov(x):
    x = np.asarray(x, dtype=np.float64)
    return x.T @ x / x.shape[0]


def test_covariance_is_the_source_covariance_exactly():
    src = data.NLGP(xi=3.0, gain=3.0)
    clone = GaussianClone(src)
    np.testing.assert_array_equal(clone.covariance(40), np.asarray(src.covariance(40)))
    assert clone.covariance(40).dtype == np.float64


@pytest.mark.slow
def test_samples_have_the_source_covariance_within_5_se():
    src = _AR1Circulant()
    num, n = 40_000, 12
    x = GaussianClone(src).sample(jax.random.key(0), num, n)
    assert x.shape == (num, n) and x.dtype == jnp.float64
    cov = src.covariance(n)
    se = np.sqrt((1 + cov**2) / num)  # Var(X_i X_j) = 1 + rho_ij^2 for a unit-variance Gaussian pair
    assert np.max(np.abs(_sample_cov(x) - cov) / se) < 5


def test_samples_are_gaussian_marginals():
    # excess kurtosis of a Gaussian sample: 0 within 5 SE, SE = sqrt(24 / num) (one coordinate)
    num = 50_000
    x = np.asarray(GaussianClone(data.NLGP(xi=1.0, gain=100.0)).sample(jax.random.key(1), num, 8))[:, 0]
    m2, m4 = np.mean(x**2), np.mean(x**4)
    assert abs(m4 / m2**2 - 3) < 5 * math.sqrt(24 / num)


def test_marginal_is_standard_normal_exactly():
    m = GaussianClone(_AR1Circulant()).marginal
    assert m.variance == 1.0 and m.excess_kurtosis == 0.0


@pytest.mark.slow
def test_psd_root_of_a_singular_covariance():
    # rank-1 covariance (all ones): samples are constant vectors with unit-variance value
    @dataclass(frozen=True)
    class _Ones(_CovarianceOnly):
        def _covariance(self, shape):
            return np.ones((shape[0], shape[0]))

    x = np.asarray(GaussianClone(_Ones()).sample(jax.random.key(2), 1000, 6))
    assert np.all(np.isfinite(x))
    # rounding-level eigenvalues (~1e-16) enter through their square roots (~1e-8)
    np.testing.assert_allclose(x, np.repeat(x[:, :1], 6, axis=1), atol=1e-6)
    assert abs(np.var(x[:, 0]) - 1) < 5 * np.sqrt(2 / 1000)


@pytest.mark.slow
def test_float32_and_determinism():
    c = GaussianClone(_AR1Circulant())
    a = c.sample(jax.random.key(3), 10, 5, dtype=jnp.float32)
    b = c.sample(jax.random.key(3), 10, 5, dtype=jnp.float32)
    assert a.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_lengthscale_and_name_pass_through():
    c = GaussianClone(_AR1Circulant(xi=2.5))
    assert c.lengthscale == 2.5 and c.name.startswith("GaussianClone(")


@pytest.mark.slow
def test_jit_through_the_clone_as_a_pytree():
    c = GaussianClone(_AR1Circulant())
    f = jax.jit(lambda model, key: model.sample(key, 4, 6))
    np.testing.assert_array_equal(np.asarray(f(c, jax.random.key(5))), np.asarray(c.sample(jax.random.key(5), 4, 6)))


def test_task_rejects_wrong_order_of_clones():
    with pytest.raises(ValueError, match="longer length-scale"):
        data.LengthscaleTask(GaussianClone(data.NLGP(xi=3.0, gain=3.0)), GaussianClone(data.NLGP(xi=1.0, gain=3.0)))


@pytest.mark.slow
def test_clone_in_a_lengthscale_task():
    task = data.LengthscaleTask(GaussianClone(data.NLGP(xi=1.0, gain=3.0)), GaussianClone(data.NLGP(xi=3.0, gain=3.0)))
    x, y = task.sample(jax.random.key(4), 64, 10)
    assert x.shape == (64, 10) and y.shape == (64,)
    s0, s1 = task.covariances(10)
    np.testing.assert_array_equal(np.asarray(s1), np.asarray(data.NLGP(xi=3.0, gain=3.0).covariance(10)))


def test_validation():
    with pytest.raises(TypeError, match="source"):
        GaussianClone(object())
    c = GaussianClone(_AR1Circulant())
    with pytest.raises(TypeError, match="key"):
        c.sample(0, 10, 5)
    with pytest.raises(ValueError, match="num"):
        c.sample(jax.random.key(0), 0, 5)
    with pytest.raises(ValueError, match="n"):
        c.sample(jax.random.key(0), 10, 1)
    with pytest.raises(TypeError, match="dtype"):
        c.sample(jax.random.key(0), 10, 5, dtype=jnp.int32)
    with pytest.raises(ValueError, match="n"):
        c.covariance(0)
