"""EmpiricalModel, EmpiricalMarginal and CloneTask: real samples as a data model of the library.

Tolerances are stated before the runs: exact identities to rounding (1e-12), sampled quantities to 6
standard errors computed from the stored data themselves (or from the exact law they were drawn from).
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import erf

from localization import data, initialisation, theory, train
from localization.data import empirical
from localization.data.empirical import (
    DEFAULT_ATOMS,
    MIN_SAMPLES,
    CloneTask,
    ContentArray,
    EmpiricalMarginal,
    EmpiricalModel,
)

N = 16
KEY = jax.random.key(0)


def skewed_samples(num=400, n=N, seed=0):
    """Skewed (gamma), offset and unevenly scaled columns with some correlation between neighbours."""
    rng = np.random.default_rng(seed)
    g = rng.gamma(2.0, size=(num, n + 1))
    x = g[:, 1:] + 0.5 * g[:, :-1]  # neighbours share a gamma variable: correlated
    return 3.0 + x * np.linspace(0.5, 4.0, n)


# --------------------------------------------------------------------------------------- standardising
def test_of_z_scores_every_coordinate_and_appends_the_negatives():
    x = skewed_samples()
    m = EmpiricalModel.of(x)
    table = m.samples
    assert table.shape == (800, N) and table.dtype == np.float64 and not table.flags.writeable
    z = (x - x.mean(axis=0)) / x.std(axis=0)
    np.testing.assert_allclose(table[:400], z, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(table[400:], -table[:400])
    np.testing.assert_allclose(table.mean(axis=0), 0.0, atol=1e-12)  # symmetrisation: mean 0 exactly
    np.testing.assert_allclose(np.mean(table**2, axis=0), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.mean(table**3, axis=0), 0.0, atol=1e-12)  # odd moments vanish
    assert m.grid == (N,) and m.num_samples == 800 and m.symmetrized


def test_without_symmetrisation_the_data_keep_their_skew():
    x = skewed_samples()
    m = EmpiricalModel.of(x, symmetrize=False)
    assert m.samples.shape == (400, N) and not m.symmetrized
    np.testing.assert_allclose(m.samples.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(np.mean(m.samples**2, axis=0), 1.0, atol=1e-12)
    # gamma(2) has skewness sqrt(2) ~ 1.41; the sum with half a neighbour about 1.1: far from 0
    assert np.min(np.mean(m.samples**3, axis=0)) > 0.5
    # the same even moments (hence covariance and kurtosis) as the symmetrised model
    s = EmpiricalModel.of(x)
    np.testing.assert_allclose(s.covariance(N), m.covariance(N), atol=1e-12)
    assert s.marginal.fourth_moment == pytest.approx(m.marginal.fourth_moment, rel=1e-12)


def test_covariance_is_the_correlation_matrix_of_the_samples_with_an_exact_unit_diagonal():
    x = skewed_samples()
    m = EmpiricalModel.of(x)
    c = m.covariance(N)
    assert c.shape == (N, N) and c.dtype == np.float64
    assert np.all(np.diag(c) == 1.0)
    np.testing.assert_array_equal(c, c.T)
    np.testing.assert_allclose(c, np.corrcoef(x, rowvar=False), rtol=0, atol=1e-12)
    assert np.linalg.eigvalsh(c).min() > 0
    c[0, 1] = 7.0  # a copy: the model's covariance is unchanged
    assert m.covariance(N)[0, 1] != 7.0


def test_patches_give_a_grid_model_and_the_neighbour_correlation_is_along_the_last_axis():
    rng = np.random.default_rng(1)
    num, h, w, rho = 4000, 3, 5, 0.6
    # AR(1) along the last axis, independent rows: neighbour correlation rho along w, 0 along h
    x = np.empty((num, h, w))
    x[..., 0] = rng.normal(size=(num, h))
    for j in range(1, w):
        x[..., j] = rho * x[..., j - 1] + math.sqrt(1 - rho**2) * rng.normal(size=(num, h))
    m = EmpiricalModel.of(x, name="ar1")
    assert m.grid == (h, w) and m.samples.shape == (2 * num, h * w)
    assert m.lengthscale_name == "neighbour_correlation" and m.lengthscale == m.neighbour_correlation
    # the definition, computed independently: mean of the pairwise correlations (i, j)-(i, j+1)
    pairs = [np.corrcoef(x[:, i, j], x[:, i, j + 1])[0, 1] for i in range(h) for j in range(w - 1)]
    assert m.neighbour_correlation == pytest.approx(np.mean(pairs), abs=1e-12)
    # sampling error of a correlation ~ (1 - rho^2)/sqrt(num) = 0.01; the mean of 12 of them is tighter
    assert abs(m.neighbour_correlation - rho) < 6 * (1 - rho**2) / math.sqrt(num)
    assert m.sample(KEY, 7, (h, w)).shape == (7, h * w)
    assert m.covariance((h, w)).shape == (h * w, h * w)
    with pytest.raises(ValueError, match=r"n must be the shape of the data, \(3, 5\), got 15"):
        m.sample(KEY, 7, h * w)
    # an (S, N) array can be read as patches through shape
    flat = EmpiricalModel.of(x.reshape(num, h * w), shape=(h, w), name="ar1")
    assert flat == m and hash(flat) == hash(m)


# --------------------------------------------------------------------------------------- sampling
def test_sample_draws_stored_rows_uniformly_reproducibly_and_inside_jit():
    m = EmpiricalModel.of(skewed_samples(num=MIN_SAMPLES))  # 40 stored rows
    for dtype in (jnp.float32, jnp.float64):
        x = m.sample(KEY, 9, N, dtype)
        assert x.shape == (9, N) and x.dtype == dtype
    num = 40_000
    x = np.asarray(m.sample(KEY, num, N))
    stored = {row.tobytes(): i for i, row in enumerate(m.samples)}
    assert len(stored) == 40
    index = np.array([stored.get(row.tobytes(), -1) for row in x])
    assert np.all(index >= 0)  # every draw is a stored row, bit for bit
    counts = np.bincount(index, minlength=40)
    p = 1 / 40  # uniform: each count is Binomial(num, p), 6 sd from num p = 1000 is ~187
    assert np.all(np.abs(counts - num * p) < 6 * math.sqrt(num * p * (1 - p))), counts
    np.testing.assert_array_equal(m.sample(KEY, 9, N), m.sample(KEY, 9, N))
    assert not np.array_equal(m.sample(KEY, 9, N), m.sample(jax.random.key(1), 9, N))
    inside = jax.jit(lambda model, k: model.sample(k, 9, N))(m, KEY)
    np.testing.assert_array_equal(inside, m.sample(KEY, 9, N))
    leaves, treedef = jax.tree_util.tree_flatten(m)
    assert leaves == [] and jax.tree_util.tree_unflatten(treedef, leaves) == m


def test_sampled_covariance_matches_the_exact_one_within_its_own_standard_error():
    m = EmpiricalModel.of(skewed_samples())
    num = 20_000
    x = np.asarray(m.sample(jax.random.key(3), num, N))
    t = m.samples
    # standard error of the mean of x_i x_j over num draws, from the stored rows themselves
    products = t[:, :, None] * t[:, None, :]
    se = np.sqrt(products.var(axis=0) / num)
    assert np.all(np.abs(x.T @ x / num - m.covariance(N)) < 6 * se + 1e-12)


def test_equality_and_hash_follow_the_content_so_jit_and_the_clone_reuse_them():
    x = skewed_samples()
    a, b = EmpiricalModel.of(x), EmpiricalModel.of(x.copy())
    assert a == b and hash(a) == hash(b) and a.digest == b.digest and a.samples is not b.samples
    y = x.copy()
    y[3, 4] += 1e-9
    assert EmpiricalModel.of(y) != a
    assert EmpiricalModel.of(x, name="other") != a  # the label is part of the model
    assert ContentArray.of(np.zeros(3)) != ContentArray.of(np.zeros((3, 1)))  # the shape counts
    clone = data.GaussianClone(a)
    np.testing.assert_array_equal(clone.covariance(N), a.covariance(N))
    assert clone.sample(KEY, 5, N).shape == (5, N)
    f = jax.jit(lambda model, k: model.sample(k, 4, N))
    f(a, KEY)
    f(b, KEY)
    assert f._cache_size() == 1  # equal content: one compilation
    f(EmpiricalModel.of(y), KEY)
    assert f._cache_size() == 2


def test_errors_name_the_argument_and_the_problem():
    x = skewed_samples()
    with pytest.raises(TypeError, match="samples must be a real"):
        EmpiricalModel.of(x.astype(str))
    with pytest.raises(TypeError, match="samples must be a real.*complex"):
        EmpiricalModel.of(x + 1j)
    with pytest.raises(TypeError, match="samples must be a real.*bool"):
        EmpiricalModel.of(x > 4)
    with pytest.raises(TypeError, match="samples"):
        EmpiricalModel.of(None)
    bad = x.copy()
    bad[5, 2] = np.nan
    with pytest.raises(ValueError, match=r"samples must be finite, got 1 NaN/inf entries \(the first at index \(5, 2"):
        EmpiricalModel.of(bad)
    with pytest.raises(ValueError, match="ndim 1"):
        EmpiricalModel.of(x[0])
    with pytest.raises(ValueError, match="ndim 4"):
        EmpiricalModel.of(x.reshape(400, 2, 2, 4))
    with pytest.raises(ValueError, match=f"at least {MIN_SAMPLES} samples.*got {MIN_SAMPLES - 1}"):
        EmpiricalModel.of(x[: MIN_SAMPLES - 1])
    const = x.copy()
    const[:, 3] = 0.7  # its mean is not exactly 0.7 in floating point: still detected
    with pytest.raises(ValueError, match="coordinate 3 has zero variance"):
        EmpiricalModel.of(const)
    grid = x.reshape(400, 4, 4).copy()
    grid[:, 1, 3] = -2.0
    with pytest.raises(ValueError, match=r"coordinate 7 \(site \(1, 3\)\) has zero variance"):
        EmpiricalModel.of(grid)
    with pytest.raises(ValueError, match="shape"):
        EmpiricalModel.of(x, shape=(5, 3))
    with pytest.raises(ValueError, match="shape"):
        EmpiricalModel.of(x, shape=(2, 2, 4))
    with pytest.raises(TypeError, match="name"):
        EmpiricalModel.of(x, name=3)
    with pytest.raises(TypeError, match="symmetrize"):
        EmpiricalModel.of(x, symmetrize=1)
    m = EmpiricalModel.of(x)
    with pytest.raises(ValueError, match="n must be the shape of the data, 16, got 15"):
        m.sample(KEY, 4, 15)
    with pytest.raises(ValueError, match="n must be the shape of the data"):
        m.covariance(17)
    with pytest.raises(TypeError, match="key"):
        m.sample(0, 4, N)
    with pytest.raises(ValueError, match="num"):
        m.sample(KEY, 0, N)
    with pytest.raises(TypeError, match="table must be a ContentArray"):
        EmpiricalModel(x, (N,))
    with pytest.raises(ValueError, match="z-scored"):
        EmpiricalModel(ContentArray.of(x), (N,))


# --------------------------------------------------------------------------------------- the marginal
def test_marginal_moments_are_those_of_all_values():
    x = skewed_samples()
    m = EmpiricalModel.of(x)
    values = m.samples.ravel()
    marg = m.marginal
    assert isinstance(marg, data.Marginal) and marg.is_discrete and marg.size == 800 * N
    assert marg.second_moment == pytest.approx(np.mean(values**2), rel=1e-14)
    assert marg.variance == pytest.approx(1.0, abs=1e-12)
    assert marg.fourth_moment == pytest.approx(np.mean(values**4), rel=1e-14)
    assert marg.excess_kurtosis == pytest.approx(np.mean(values**4) / np.mean(values**2) ** 2 - 3, abs=1e-12)
    assert marg.mean_absolute == pytest.approx(np.mean(np.abs(values)), rel=1e-14)
    assert marg == EmpiricalMarginal(values) and hash(marg) == hash(EmpiricalMarginal(values))


def test_quadrature_keeps_the_second_moment_and_bounds_the_fourth():
    """Atoms at the root mean square of equal-count bins of |v|: E[X^2] is exact, E[X^4] is low by the
    spread of X^2 within the bins (Jensen), bounded here by 2e-3 relative for 10^6 normal values
    (6e-4 measured) with the default 2048 atoms; every value its own atom gives the exact law."""
    v = np.random.default_rng(2).normal(size=1_000_000)
    marg = EmpiricalMarginal(v)
    nodes, weights = marg.quadrature()
    assert nodes.shape == weights.shape == (2 * DEFAULT_ATOMS,)
    assert not nodes.flags.writeable and not weights.flags.writeable
    np.testing.assert_array_equal(nodes, -nodes[::-1])
    assert np.all(np.diff(nodes) >= 0) and np.all(weights > 0)
    assert np.sum(weights) == pytest.approx(1.0, abs=1e-14)
    assert np.sum(weights * nodes**2) == pytest.approx(marg.second_moment, rel=1e-13)
    deficit = 1.0 - np.sum(weights * nodes**4) / marg.fourth_moment
    assert -1e-13 < deficit < 2e-3
    # fewer atoms, larger deficit (the error is a quantisation error)
    n64, w64 = marg.quadrature(64)
    assert 1.0 - np.sum(w64 * n64**4) / marg.fourth_moment > 4 * deficit
    small = EmpiricalMarginal(v[:500])
    x, w = small.quadrature(10_000)
    assert x.size == 1000 and np.sum(w * x**4) == pytest.approx(small.fourth_moment, rel=1e-13)
    with pytest.raises(ValueError, match="order"):
        marg.quadrature(0)


def test_marginal_samples_are_the_values_with_a_random_sign():
    v = np.abs(np.random.default_rng(4).standard_t(6, size=5000)) + 0.1  # all positive
    marg = EmpiricalMarginal(v)
    draws = np.asarray(marg.sample(KEY, 100_000))
    assert draws.shape == (100_000,) and draws.dtype == np.float64
    assert np.isin(np.abs(draws), v).all()
    # the sign is +-1 with probability 1/2: mean within 6 standard errors of 0
    assert abs(np.mean(draws)) < 6 * math.sqrt(marg.second_moment / draws.size)
    m4, m8 = marg.fourth_moment, float(np.mean(v**8))
    assert abs(np.mean(draws**4) - m4) < 6 * math.sqrt((m8 - m4**2) / draws.size)


def test_marginal_errors():
    with pytest.raises(ValueError, match=f"at least {MIN_SAMPLES} values"):
        EmpiricalMarginal(np.ones(MIN_SAMPLES - 1))
    with pytest.raises(ValueError, match="not all be 0"):
        EmpiricalMarginal(np.zeros(100))
    with pytest.raises(ValueError, match="values must be finite"):
        EmpiricalMarginal(np.r_[np.ones(30), np.inf])
    with pytest.raises(TypeError, match="values"):
        EmpiricalMarginal(np.ones(30) * 1j)


# --------------------------------------------------------------------------------------- the amplifier
NLGP_SOURCE = data.NLGP(3.0, 3.0)  # xi = 3, gain = 3: excess kurtosis -1.83


@pytest.fixture(scope="module")
def nlgp_model():
    rows = 20_000
    return EmpiricalModel.of(np.asarray(NLGP_SOURCE.sample(jax.random.key(5), rows, N)), name="NLGP(3, 3)"), rows


def test_amplifier_of_the_data_agrees_with_the_exact_amplifier_of_their_law(nlgp_model):
    """phi_hat(a) = mean over the values of f_a(X), f_a(x) = x erf(x alg^-1(a)/sqrt 2), after z-scoring.
    Rows are independent but the N sites of a row are correlated, so the standard error of a mean over
    S rows is at most sd(f_a)/sqrt(S) (a mean of correlated equal-variance terms varies at most as one);
    z-scoring rescales X by 1 + O(sd(X^2)/(2 sqrt S)), which moves phi by E[X f_a'(X)] times that.
    Tolerance: 6 times the sum, from the exact law's quadrature."""
    model, rows = nlgp_model
    exact = theory.amplifier_of(NLGP_SOURCE.marginal)
    phi = theory.amplifier_of(model.marginal)
    a = np.array([-0.9, -0.5, 0.1, 0.3, 0.6, 0.9, 0.99])
    nodes, weights = NLGP_SOURCE.marginal.quadrature()
    c = a / np.sqrt(1 - a**2) / math.sqrt(2)
    f = nodes[None, :] * erf(nodes[None, :] * c[:, None])
    sd_f = np.sqrt(np.sum(weights * f**2, axis=1) - np.sum(weights * f, axis=1) ** 2)
    scaled = 1.001 * nodes[None, :]  # d/ds E[f(sX)] at s = 1 by a forward difference
    slope = np.abs(np.sum(weights * scaled * erf(scaled * c[:, None]), axis=1) - np.sum(weights * f, axis=1)) / 1e-3
    sd_x2 = math.sqrt(NLGP_SOURCE.marginal.fourth_moment - 1.0)
    tol = 6 * (sd_f + slope * sd_x2 / 2) / math.sqrt(rows)
    diff = np.abs(np.asarray(phi(a)) - np.asarray(exact(a)))
    assert np.all(diff < tol), (diff, tol)
    # a Gaussian law's (linear) amplifier is outside the tolerance at large |a|: the test can fail
    gauss = theory.amplifier_of(data.GaussianMarginal())
    assert np.max(np.abs(np.asarray(gauss(a)) - np.asarray(exact(a))) / tol) > 5


def test_amplifier_quadrature_matches_the_mean_over_all_values_and_the_exact_slope(nlgp_model):
    model, _ = nlgp_model
    phi = theory.amplifier_of(model.marginal)
    values = model.samples.ravel()
    a = np.array([0.05, 0.5, 0.95])
    c = a / np.sqrt(1 - a**2) / math.sqrt(2)
    direct = np.array([np.mean(values * erf(values * ci)) for ci in c])
    np.testing.assert_allclose(np.asarray(phi(a)), direct, rtol=1e-5)  # measured 2e-7
    # phi'(0) = sqrt(2/pi) E[X^2] = sqrt(2/pi): the rule keeps the second moment exactly
    assert float(jax.grad(phi)(0.0)) == pytest.approx(math.sqrt(2 / math.pi), rel=1e-12)


# --------------------------------------------------------------------------------------- the task
def test_clone_task_has_equal_covariances_and_samples_both_classes(nlgp_model):
    model, _ = nlgp_model
    task = CloneTask(model)
    assert task.model1 is model and task.model0 == data.GaussianClone(model)
    c0, c1 = task.covariances(N)
    np.testing.assert_array_equal(c0, c1)
    m0, m1 = task.marginals
    assert isinstance(m0, data.GaussianMarginal) and m1 == model.marginal
    x, y = task.sample(KEY, 400, N)
    assert x.shape == (400, N) and y.shape == (400,) and x.dtype == y.dtype == jnp.float64
    assert set(np.unique(np.asarray(y))) == {0.0, 1.0}
    stored = {row.tobytes() for row in model.samples}
    x, y = np.asarray(x), np.asarray(y)
    in_data = np.array([row.tobytes() in stored for row in x])
    np.testing.assert_array_equal(in_data, y == 1)  # class 1 draws stored rows, the clone never does
    xb, yb = task.sample_balanced(KEY, 9, N, jnp.float32)
    assert xb.dtype == jnp.float32 and np.asarray(yb).tolist() == [0.0] * 4 + [1.0] * 5
    np.testing.assert_array_equal(np.asarray(task.sample(KEY, 400, N)[0]), x)  # reproducible by key
    assert CloneTask(model) == task and hash(CloneTask(model)) == hash(task)
    # any hashable data model works
    nl = CloneTask(NLGP_SOURCE)
    np.testing.assert_array_equal(*nl.covariances(N))
    with pytest.raises(TypeError, match="model must be a data model"):
        CloneTask(np.eye(3))
    with pytest.raises(ValueError, match="n must be the shape of the data"):
        task.sample(KEY, 4, 12)
    with pytest.raises(ValueError, match="num must be >= 2"):
        task.sample_balanced(KEY, 1, N)


def test_a_relu_neuron_trains_on_a_clone_task_and_lowers_the_loss(nlgp_model):
    """60 online SGD steps (lr 0.1, batch 2000) from a small Xavier initialisation; the loss of the
    initial and the final weights is compared on one fresh batch of 20 000 (paired differences), so
    its standard error is that of the mean paired difference; the decrease must exceed 6 of them."""
    model, _ = nlgp_model
    task = CloneTask(model)
    w0 = initialisation.init_weights(jax.random.key(2), N, 0.01)
    tr = train.train_online(jax.random.key(3), task, w0, lr=0.1, batch=2000, steps=60, checkpoints=[0, 60])
    w_final = np.asarray(tr.weights[-1], np.float64)
    assert np.all(np.isfinite(w_final)) and np.linalg.norm(w_final - np.asarray(w0)) > 0.1
    x, y = (np.asarray(a) for a in task.sample(jax.random.key(4), 20_000, N))
    before = (y - np.maximum(x @ np.asarray(w0), 0)) ** 2
    after = (y - np.maximum(x @ w_final, 0)) ** 2
    drop = before - after
    assert np.mean(drop) > 6 * np.std(drop) / math.sqrt(drop.size), (np.mean(before), np.mean(after))


def test_device_values_are_the_stored_values_once_per_dtype_and_refuse_other_content():
    content = empirical.ContentArray.of(np.array([[1.0, -2.0], [3.0, -4.0]]))
    on_device = empirical.device_values(content, "float32")
    np.testing.assert_array_equal(np.asarray(on_device), content.array.astype(np.float32))
    assert empirical.device_values(content, "float32") is on_device  # cached, not copied again
    np.testing.assert_array_equal(np.asarray(empirical.device_values(content, "float32", True)), np.abs(content.array))
    with pytest.raises(TypeError, match="content must be a ContentArray"):
        empirical.device_values(np.zeros(3).tobytes(), "float32")
