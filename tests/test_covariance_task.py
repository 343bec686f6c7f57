"""Tests of localization.data.CovarianceTask (two Gaussian classes with given covariances)."""

import jax
import numpy as np
import pytest

from localization import data, initialisation, train

N = 12


@pytest.mark.slow
def test_samples_have_the_given_class_covariances():
    # Sample covariance of 2^16 draws per class: each entry within 5 standard errors (an entry of a
    # Gaussian sample covariance has standard deviation sqrt((S_ij^2 + S_ii S_jj) / m)).
    task = data.CovarianceTask.of_lengthscales(3.0, 1.0, N)  # xi0 > xi1: allowed here
    m = 2**16
    x, y = task.sample_balanced(jax.random.key(0), 2 * m, N)
    x, y = np.asarray(x), np.asarray(y)
    assert np.array_equal(y, np.r_[np.zeros(m), np.ones(m)])
    for label, cov in zip((0, 1), task.covariances(N), strict=True):
        emp = x[y == label].T @ x[y == label] / m
        se = np.sqrt((cov**2 + np.outer(np.diag(cov), np.diag(cov))) / m)
        assert np.max(np.abs(emp - cov) / se) < 5
    x, y = task.sample(jax.random.key(1), 4000, N)
    assert abs(float(np.mean(np.asarray(y))) - 0.5) < 4 * 0.5 / np.sqrt(4000)


def test_root_reproduces_a_singular_covariance():
    v = np.linspace(1.0, 2.0, N)
    cov = np.outer(v, v)  # rank one: PSD with N - 1 zero eigenvalues
    task = data.CovarianceTask(np.eye(N), cov)
    assert np.allclose(task.root1 @ task.root1.T, cov, atol=1e-12)


@pytest.mark.slow
def test_train_sweep_over_covariances_in_either_order():
    # Tasks that differ only in their covariance arrays share one compiled sweep, and each row equals
    # a single-task run on the same stream.
    tasks = [data.CovarianceTask.of_lengthscales(a, b, N) for a, b in ((1.0, 3.0), (3.0, 1.0))]
    w0 = initialisation.init_weights(jax.random.key(2), N)
    kw = dict(lr=0.05, batch=64, steps=20, checkpoints=3, balanced=True)
    sweep = train.train_sweep(jax.random.key(3), tasks, w0, **kw)
    assert sweep.weights.shape == (2, 3, N)
    for p, task in enumerate(tasks):
        one = train.train_online(jax.random.key(3), task, w0, **kw)
        scale = np.max(np.abs(np.asarray(one.weights)))
        assert np.max(np.abs(np.asarray(sweep.weights[p]) - np.asarray(one.weights))) < 1e-5 * scale


def test_marginals_need_unit_variances():
    task = data.CovarianceTask.of_lengthscales(1.0, 3.0, N)
    assert all(m.excess_kurtosis == 0 for m in task.marginals)
    with pytest.raises(ValueError, match="class 1 have variances in"):
        _ = data.CovarianceTask(np.eye(N), 2 * np.eye(N)).marginals


def test_bad_inputs():
    good = np.eye(N)
    with pytest.raises(ValueError, match="cov1 must be positive semi-definite"):
        data.CovarianceTask(good, -good)
    with pytest.raises(ValueError, match="cov0 must be symmetric"):
        data.CovarianceTask(np.triu(np.ones((N, N))), good)
    with pytest.raises(ValueError, match="equal shapes"):
        data.CovarianceTask(good, np.eye(N + 1))
    with pytest.raises(ValueError, match="cov0 must be finite"):
        data.CovarianceTask(np.full((N, N), np.nan), good)
    with pytest.raises(TypeError, match="cov1 must be an array"):
        data.CovarianceTask(good, "identity")
    task = data.CovarianceTask(good, good)
    with pytest.raises(ValueError, match=f"n must be the covariances' size N = {N}"):
        task.sample(jax.random.key(0), 4, N + 1)
    with pytest.raises(ValueError, match="num must be >= 2"):
        task.sample_balanced(jax.random.key(0), 1, N)
