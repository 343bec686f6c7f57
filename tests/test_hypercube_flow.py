"""Tests for localization.theory.hypercube_flow: the neuron's exact flow on two laws on {-1, +1}^n."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from localization import models
from localization.data import spectral
from localization.experiments import hypercube as hx
from localization.theory import hypercube as hc
from localization.theory import hypercube_flow as hf
from localization.theory import hypercube_laws as hl

TOL = 1e-12


def ising_task(n=8, j1=0.7, j0=0.3):
    return hf.HypercubeTask.of(hl.ising_ring_law(j0, n), hl.ising_ring_law(j1, n), n)


def skewed_task(n=5):
    """Two laws without sign symmetry (fields h): c(w) and A(w) w differ from the symmetric forms."""
    x = hl.vertices(n)
    p0 = np.exp(0.3 * np.sum(x * np.roll(x, -1, 1), 1) - 0.4 * x.sum(1))
    p1 = np.exp(0.8 * np.sum(x * np.roll(x, -1, 1), 1) + 0.5 * x[:, 0])
    return hf.HypercubeTask.of(p0 / p0.sum(), p1 / p1.sum(), n)


W8 = np.array([0.9, -0.3, 0.2, 0.05, -0.7, 0.4, 0.1, -0.2])


@pytest.mark.parametrize(
    "task, w", [(ising_task(), W8), (skewed_task(), W8[:5]), (ising_task(), np.eye(8)[0] + np.eye(8)[1])]
)
@pytest.mark.slow
def test_flow_is_minus_the_autodiff_gradient(task, w):
    grad = jax.grad(lambda v: hf.expected_loss(v, task))(jnp.asarray(w))
    assert np.abs(np.asarray(grad) + np.asarray(hf.flow(w, task))).max() < TOL
    c, a = hf.flow_parts(w, task)
    assert np.allclose(hf.flow(w, task), c - a @ w, atol=TOL)


@pytest.mark.slow
def test_loss_and_gradient_equal_train_mse_on_all_vertices():
    # p0 = p1 = uniform: the data set (every vertex once with label 1, once with label 0) has the exact law
    n = 6
    x = hl.vertices(n)
    task = hf.HypercubeTask.of(hl.uniform_law(n), hl.uniform_law(n), n)
    xs, ys = jnp.asarray(np.concatenate([x, x])), jnp.asarray(np.r_[np.ones(2**n), np.zeros(2**n)])
    w = jnp.asarray(W8[:n])
    assert abs(float(models.mse(w, xs, ys)) - float(hf.expected_loss(w, task))) < TOL
    g = jax.grad(lambda v: models.mse(v, xs, ys))(w)
    assert np.abs(np.asarray(g) + np.asarray(hf.flow(w, task))).max() < TOL


def test_sign_symmetric_laws_give_f_minus_half_sigma():
    task = ising_task()
    s0, s1 = task.covariances()
    for w in (W8, np.eye(8)[0] + np.eye(8)[1], np.r_[2.0, 1.0, 1.0, np.zeros(5)]):  # the last two have ties
        expected = hc.threshold_mean(w, np.asarray(task.p1)) - 0.5 * (s0 + s1) @ w
        assert np.allclose(hf.flow(w, task), expected, atol=TOL)
    # without sign symmetry the reduction fails (so the test above can fail)
    sk = skewed_task()
    s0, s1 = sk.covariances()
    w = W8[:5]
    gap = hf.flow(w, sk) - (hc.threshold_mean(w, np.asarray(sk.p1)) - 0.5 * (s0 + s1) @ w)
    assert np.abs(gap).max() > 1e-3


def test_integrate_is_euler_on_the_sgd_time_axis():
    task = ising_task()
    w0 = np.stack([W8, -0.5 * W8]) * 0.01
    traj = hf.integrate(w0, task, lr=0.05, steps=3, checkpoints=[0, 1, 3])
    assert traj.weights.shape == (2, 3, 8)
    assert np.allclose(traj.times, [0.0, 0.05, 0.15])
    w1 = w0 + 0.05 * np.asarray(hf.flow(w0, task))
    w3 = w1
    for _ in range(2):
        w3 = w3 + 0.05 * np.asarray(hf.flow(w3, task))
    assert np.allclose(traj.weights[:, 0], w0, atol=TOL)
    assert np.allclose(traj.weights[:, 1], w1, atol=TOL) and np.allclose(traj.weights[:, 2], w3, atol=TOL)


def test_dominant_fixed_point_is_the_closed_form_and_attracts_the_flow():
    # Ising (0.7, 0.3), n = 8: w* = (S0 + S1)^-1 S1 e_0 is dominant (book Eq. (hc-fixed))
    task = ising_task()
    s0, s1 = task.covariances()
    w_star = np.linalg.solve(s0 + s1, s1[:, 0])
    assert hc.dominance_margin(w_star) > 0
    fp, conv = hf.fixed_point(np.eye(8)[0], task)
    assert conv and np.allclose(fp, w_star, atol=TOL)
    assert np.abs(np.asarray(hf.flow(fp, task))).max() < TOL
    fp_neg, _ = hf.fixed_point(-np.eye(8)[3], task)  # sign and shift symmetry
    assert np.allclose(fp_neg, -np.roll(w_star, 3), atol=TOL)
    traj = hf.integrate(w_star + 0.02 * W8, task, lr=0.1, steps=2000, checkpoints=1)  # stable: -A < 0 near w*
    assert np.abs(np.asarray(traj.weights[0]) - w_star).max() < 1e-8


def test_fixed_point_without_dominance_is_exact():
    # the skewed task has no sign symmetry; whatever cell the iteration ends in, the flow vanishes there
    task = skewed_task()
    fp, conv = hf.fixed_point(np.array([1.0, 0.8, -0.5, 0.3, 0.2]), task)
    assert conv
    assert np.abs(np.asarray(hf.flow(fp, task))).max() < 1e-10


def test_sign_gaussian_ring_law_matches_exact_orthants_and_arcsine_law():
    key = jax.random.key(3)
    p3 = hx.sign_gaussian_ring_law(key, 1.5, 3, num=400_000)
    # exact law by Sheppard's trivariate formula; binomial se <= sqrt(0.25 / 400k) = 8e-4 before symmetrising
    assert np.abs(p3 - hl.nlgp_limit_law(1.5, 3)).max() < 4e-3
    n = 8
    p = hx.sign_gaussian_ring_law(key, 2.0, n, num=400_000)
    x = hl.vertices(n)
    cov = spectral.covariance(2.0, n)
    rho = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    sigma = (x.T * p) @ x
    assert np.abs(sigma - 2 / np.pi * np.arcsin(np.clip(rho, -1, 1))).max() < 1e-2
    for g in hf.ring_symmetry_images(n):  # symmetrised: exactly invariant
        assert np.allclose(p[g], p, atol=1e-15)


def test_ring_symmetry_images_are_permutations_preserving_the_ising_law():
    n = 6
    images = hf.ring_symmetry_images(n)
    assert images.shape == (4 * n, 2**n)
    assert all(np.array_equal(np.sort(g), np.arange(2**n)) for g in images)
    p = hl.ising_ring_law(0.9, n)
    assert all(np.allclose(p[g], p, atol=TOL) for g in images)


def test_task_laws():
    t = hx.task_laws("Ising", 0.7, 6)
    assert np.allclose(t.p1, hl.ising_ring_law(0.7, 6)) and np.allclose(t.p0, hl.ising_ring_law(0.3, 6))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: hx.task_laws("Kur", 3.0, 6), "family"),
        (lambda: hx.task_laws("Ising", 0.2, 6), "param"),
        (lambda: hx.task_laws("NLGP", 100.0, 6), "key"),
        (lambda: hx.task_laws("NLGP", 100.0, 6, xi=(3.0, 1.0), key=jax.random.key(0)), "xi"),
        (lambda: hx.sign_gaussian_ring_law(jax.random.key(0), 1.0, 17), "n must be <= 16"),
        (lambda: hf.flow(np.ones(5), ising_task()), "shape"),
        (lambda: hf.flow(np.r_[np.nan, np.ones(7)], ising_task()), "w"),
        (lambda: hf.integrate(np.ones(8), ising_task(), lr=0.0, steps=3), "lr"),
        (lambda: hf.integrate(np.ones(8), ising_task(), lr=1e300, steps=5), "diverged"),
        (lambda: hf.fixed_point(np.zeros(8), ising_task()), "singular"),
        (lambda: hf.HypercubeTask.of(np.ones(8), np.ones(8) / 8, 3), "sum to 1"),
    ],
)
def test_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_flow_rejects_other_tasks():
    with pytest.raises(TypeError, match="HypercubeTask"):
        hf.flow(np.ones(8), object())
