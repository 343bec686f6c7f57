"""Tests of the data models and the length-scale task (localization.data)."""

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special as sp

from localization import data
from localization.data import copula_covariance

KEY = jax.random.key(0)


def emp_cov(x):
    return x.T @ x / x.shape[0]


def translation_z(x, shift):
    """Largest |z| of E[f_i(X)] - E[f_{i+shift}(X)] over positions i, for the bounded statistics
    f_i = tanh(x_i) tanh(x_{i+1}) and f_i = tanh(x_i)^2 tanh(x_{i+3})^2 (indices mod n).

    A translation-invariant law (S2) gives E f_i = E f_{i+shift} for every i, so each z (paired
    differences over independent samples) is approximately standard normal: with 2n z-scores the
    chance that one exceeds 5.5 is below 2n * 4e-8. A statistic that is constant (e.g. tanh^2 of
    +-1 data) has zero differences and contributes z = 0.
    """
    t = np.tanh(x)
    worst = 0.0
    for stat in (t * np.roll(t, -1, axis=1), t**2 * np.roll(t, -3, axis=1) ** 2):
        diff = stat - np.roll(stat, -shift, axis=1)
        mean, sd = diff.mean(axis=0), diff.std(axis=0, ddof=1)
        assert np.all((sd > 0) | (mean == 0))
        z = np.divide(np.abs(mean) * math.sqrt(x.shape[0]), sd, out=np.zeros_like(mean), where=sd > 0)
        worst = max(worst, float(z.max()))
    return worst


@pytest.mark.slow
def test_translation_statistic_detects_a_law_that_is_not_translation_invariant():
    # the paper's non-circulant kernel exp(-(i-j)^2/xi^2) (Sec. 2.3) breaks S2 at the boundary: the pair
    # (n-1, 0) is uncorrelated while every other neighbouring pair has correlation exp(-1/xi^2)
    n, xi, num = 16, 2.0, 50_000
    i = np.arange(n)
    C = np.exp(-((i[:, None] - i[None, :]) ** 2) / xi**2)
    x = np.asarray(jax.random.multivariate_normal(KEY, jnp.zeros(n), jnp.asarray(C), (num,), method="eigh"))
    assert translation_z(x, 5) > 20
    # the library's periodised kernel at the same xi passes
    assert translation_z(np.asarray(data.Gaussian(xi).sample(KEY, num, n)), 5) < 5.5


@pytest.mark.parametrize("m", [data.Gaussian(1.5), data.NLGP(1.5, 1.1), data.Kur(1.5, 10.0)], ids=repr)
@pytest.mark.slow
def test_grid_sampling(m):
    x = np.asarray(m.sample(KEY, 50_000, (5, 7)))
    assert x.shape == (50_000, 35)
    C = m.covariance((5, 7))
    assert np.abs(emp_cov(x) - C).max() < 6 * math.sqrt(3 / 50_000)


@pytest.mark.slow
def test_ising_correlations_exact_formula():
    N, J, num = 40, 0.7, 200_000
    x = np.asarray(data.Ising(J).sample(KEY, num, N, dtype=jnp.float32), dtype=np.float64)
    assert set(np.unique(x)) == {-1.0, 1.0}
    t = math.tanh(J)
    d = np.arange(N)
    exact = (t**d + t ** (N - d)) / (1 + t**N)
    emp = np.array([np.mean(x * np.roll(x, -k, axis=1)) for k in d])
    # averaged over 40 positions: standard error <= 1/sqrt(num); allow 6 of them
    assert np.abs(emp - exact).max() < 6 / math.sqrt(num)
    np.testing.assert_allclose(data.Ising(J).covariance(N)[0], exact, atol=1e-15)


@pytest.mark.parametrize("J", [0.0, 0.4, 1.5])
@pytest.mark.slow
def test_ising_exact_distribution_small_chain(J):
    # all 2^5 configurations: frequencies vs Boltzmann weights exp(J sum x_i x_{i+1}) (periodic)
    N, num = 5, 200_000
    x = np.asarray(data.Ising(J).sample(jax.random.key(3), num, N)).astype(int)
    configs = np.array(list(itertools.product([-1, 1], repeat=N)))
    energy = np.sum(configs * np.roll(configs, -1, axis=1), axis=1)
    p = np.exp(J * energy)
    p /= p.sum()
    codes = ((x + 1) // 2) @ (2 ** np.arange(N)[::-1])
    freq = np.bincount(codes, minlength=2**N) / num
    assert np.all(np.abs(freq - p) < 6 * np.sqrt(p * (1 - p) / num) + 1e-9)


@pytest.mark.slow
def test_ising_large_coupling_is_finite():
    x = np.asarray(data.Ising(40.0).sample(KEY, 1000, 10))
    assert np.all(np.abs(x.sum(1)) == 10)  # all spins aligned


def test_nlgp_covariance_closed_form_vs_copula_quadrature():
    g = 1.1
    Zn = float(data.nlgp_normaliser(g))
    C = data.covariance(2.0, 12)
    S = data.NLGP(2.0, g).covariance(12)
    for c, s in zip(C[0, 1:7], S[0, 1:7], strict=True):
        assert abs(copula_covariance(lambda z: sp.erf(g * z) / Zn, c) - s) < 1e-13


@pytest.mark.slow
def test_kur_covariance_properties():
    m = data.Kur(3.0, 5.0)
    S = m.covariance(20)
    C = data.covariance(3.0, 20)
    # copula covariance is increasing in c and below c in absolute value (|corr(h)| <= |c|
    # for the maximal-correlation bound of a Gaussian copula with an odd h), 1 at c = 1
    order = np.argsort(C[0])
    assert np.all(np.diff(S[0][order]) >= -1e-15)
    assert np.all(np.abs(S[0]) <= np.abs(C[0]) + 1e-12)
    # convergence of the quadrature (default order, NumPy map) against twice the order (JAX map)
    for c in (0.3, 0.9, 0.999):
        fine = copula_covariance(lambda z: np.asarray(data.kur_transform(jnp.asarray(z), 5.0)), c, order=320)
        assert abs(fine - copula_covariance(lambda z: data.kur_transform(z, 5.0), c)) < 1e-10


@pytest.mark.slow
def test_dtypes_jit_and_key_impls():
    m = data.NLGP(2.0, 3.0)
    f = jax.jit(lambda k: m.sample(k, 64, 10, jnp.float32))
    for impl in ("threefry2x32", "rbg", "unsafe_rbg"):
        x = f(jax.random.key(1, impl=impl))
        assert x.dtype == jnp.float32 and x.shape == (64, 10)
    x = m.sample(jax.random.PRNGKey(0), 8, 10)  # raw uint32[2] key
    assert x.dtype == jnp.float64


@pytest.mark.slow
def test_vmap_over_family_parameter():
    gains = jnp.array([0.1, 1.0, 10.0])
    xs = jax.vmap(lambda g: data.NLGP(2.0, g).sample(KEY, 200, 8))(gains)
    assert xs.shape == (3, 200, 8)
    batched = data.Kur(2.0, jnp.array([5.0, 10.0]))
    ys = jax.vmap(lambda m: m.sample(KEY, 100, 8))(batched)
    assert ys.shape == (2, 100, 8)
    z = jax.jit(lambda m: m.sample(KEY, 10, 8))(data.Ising(0.5))
    assert z.shape == (10, 8)


# ---------------------------------------------------------------- task
@pytest.mark.slow
def test_task_labels_and_class_covariances():
    task = data.LengthscaleTask.of(data.NLGP, xi=(1.0, 3.0), gain=100.0)
    assert task.model0 == data.NLGP(1.0, 100.0) and task.model1 == data.NLGP(3.0, 100.0)
    x, y = task.sample(KEY, 40_000, 12)
    x, y = np.asarray(x), np.asarray(y)
    assert set(np.unique(y)) == {0.0, 1.0}
    assert abs(y.mean() - 0.5) < 6 * 0.5 / math.sqrt(40_000)
    S0, S1 = task.covariances(12)
    tol = 6 * math.sqrt(1 / 20_000)
    assert np.abs(emp_cov(x[y == 1]) - S1).max() < tol
    assert np.abs(emp_cov(x[y == 0]) - S0).max() < tol


@pytest.mark.parametrize(
    "task",
    [
        data.LengthscaleTask.of(data.Kur, xi=(1.0, 3.0), k=(10.0, 4.5)),  # shared draw, two transforms
        data.LengthscaleTask.of(data.Ising, J=(0.3, 0.7)),
    ],  # independent draws per class
    ids=["kur-two-k", "ising"],
)
@pytest.mark.slow
def test_task_class_laws(task):
    num, n = 40_000, 10
    x, y = task.sample(jax.random.key(7), num, n, dtype=jnp.float32)
    x, y = np.asarray(x, np.float64), np.asarray(y)
    S0, S1 = task.covariances(n)
    for lab, S, m in ((0, S0, task.model0), (1, S1, task.model1)):
        xs = x[y == lab]
        m4 = m.marginal.fourth_moment if math.isfinite(m.marginal.fourth_moment) else 30.0
        assert np.abs(emp_cov(xs) - S).max() < 6 * math.sqrt(m4 / len(xs))


def test_task_validation():
    with pytest.raises(ValueError, match="longer length-scale"):
        data.LengthscaleTask.of(data.NLGP, xi=(3.0, 1.0), gain=1.0)
    with pytest.raises(ValueError, match="longer length-scale"):
        data.LengthscaleTask(data.Ising(0.7), data.Ising(0.3))
    with pytest.raises(TypeError, match="model0"):
        data.LengthscaleTask("a", data.Gaussian(1.0))
    with pytest.raises(TypeError, match="model_cls"):
        data.LengthscaleTask.of(int, xi=(1.0, 2.0))
    with pytest.raises(ValueError, match="xi"):
        data.LengthscaleTask.of(data.Gaussian, xi=(1.0, 2.0, 3.0))


# ---------------------------------------------------------------- validation
@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_xi(bad):
    for cls, kw in [
        (data.Gaussian, {}),
        (data.NLGP, {"gain": 1.0}),
        (data.Kur, {"k": 5.0}),
        (data.StudentT, {"nu": 3.0}),
        (data.EllipseSurface, {}),
        (data.RadialElliptical, {}),
    ]:
        with pytest.raises(ValueError, match="xi"):
            cls(bad, **kw)


def test_bad_family_parameters():
    for bad in (0.0, -2.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="gain"):
            data.NLGP(1.0, bad)
    for bad in (2.0, 1.5, -1.0, float("inf")):
        with pytest.raises(ValueError, match="k"):
            data.Kur(1.0, bad)
    data.Kur(1.0, 3.0)  # 2 < k <= 4 is valid (infinite kurtosis)
    for bad in (2.0, 1.0, float("nan")):
        with pytest.raises(ValueError, match="nu"):
            data.StudentT(1.0, bad)
    for bad in (-0.1, float("inf")):
        with pytest.raises(ValueError, match="J"):
            data.Ising(bad)
    with pytest.raises(ValueError, match="gain"):
        data.NLGP(1.0, jnp.array([1.0, -1.0]))
    with pytest.raises(TypeError, match="gain"):
        data.NLGP(1.0, "big")
    with pytest.raises(TypeError, match="xi"):
        data.Gaussian(None)
    with pytest.raises(ValueError, match="high"):
        data.SinglePulse(0.5, 0.2)
    with pytest.raises(ValueError, match="low"):
        data.SinglePulse(0.0, 0.2)
    with pytest.raises(ValueError, match="dim"):
        data.EllipseSurface(1.0, dim=1)


def test_bad_sample_arguments():
    m = data.Gaussian(1.0)
    with pytest.raises(TypeError, match="key"):
        m.sample(0, 10, 5)
    with pytest.raises(TypeError, match="key"):
        m.sample(jnp.zeros(3, jnp.uint32), 10, 5)
    with pytest.raises(ValueError, match="num"):
        m.sample(KEY, 0, 5)
    with pytest.raises(TypeError, match="num"):
        m.sample(KEY, 10.0, 5)
    with pytest.raises(ValueError, match="n"):
        m.sample(KEY, 10, 1)
    with pytest.raises(TypeError, match="n"):
        m.sample(KEY, 10, 5.0)
    with pytest.raises(TypeError, match="dtype"):
        m.sample(KEY, 10, 5, dtype=jnp.int32)
    with pytest.raises(ValueError, match="n"):
        data.Ising(0.3).sample(KEY, 10, (4, 4))
    with pytest.raises(ValueError, match="dim"):
        data.EllipseSurface(1.0, dim=40).sample(KEY, 10, 30)
    with pytest.raises(ValueError, match="n"):
        data.SinglePulse(0.5, 0.55).sample(KEY, 10, 3)
    with pytest.raises(TypeError, match="key"):
        data.LengthscaleTask.of(data.Gaussian, xi=(1.0, 2.0)).sample(1, 10, 5)


@pytest.mark.slow
def test_task_shares_transform_for_identical_tracer_and_fast_float32_normals():
    """A gain shared by both classes as one tracer (as train passes it under jit/vmap) gives the same
    samples as concrete equal gains (one transform); float32 draws use prng.normal, float64 jax's."""
    from localization import prng

    assert data.task._same_leaves(data.NLGP(1.0, 3.0), data.NLGP(2.0, 3.0))
    assert not data.task._same_leaves(data.NLGP(1.0, 3.0), data.NLGP(2.0, 4.0))

    def f(g):
        m0, m1 = data.NLGP(1.0, 3.0), data.NLGP(2.0, 3.0)
        m0, m1 = (jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(m), [g]) for m in (m0, m1))
        assert data.task._same_leaves(m0, m1)  # the same tracer
        return data.LengthscaleTask(m0, m1).sample(KEY, 64, 12, jnp.float32)[0]

    ref = data.LengthscaleTask.of(data.NLGP, xi=(1.0, 2.0), gain=3.0).sample(KEY, 64, 12, jnp.float32)[0]
    np.testing.assert_allclose(np.asarray(jax.jit(f)(jnp.float64(3.0))), np.asarray(ref), rtol=0, atol=1e-6)
    for dtype in (jnp.float32, jnp.float64):
        got = data.spectral.standard_normals(KEY, (5, 7), dtype)
        want = prng.normal(KEY, (5, 7)) if dtype == jnp.float32 else jax.random.normal(KEY, (5, 7), dtype)
        assert got.dtype == dtype
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_lengthscale_tasks_checks_a_sweep_of_tasks():
    task = data.family_task("NLGP", 3.0)
    assert data.lengthscale_tasks("tasks", (task, task)) == [task, task]
    for bad, match in (("NLGP", "non-empty sequence"), ([], "non-empty sequence"), ([task, 3.0], r"tasks\[1\]")):
        with pytest.raises(TypeError, match=match):
            data.lengthscale_tasks("tasks", bad)
