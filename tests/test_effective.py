"""Tests of the effective flow (paper Lemma 3.1, Eq. (5)) and its integrator."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from localization.data import spectral as C
from localization.theory import (
    Amplifier,
    amplifier_argument,
    effective_fixed_point,
    effective_jacobian,
    effective_vector_field,
    gaussian,
    integrate_effective,
)
from localization.trajectory import Trajectory

N = 12
S0 = C.covariance_matrix(0.7, (N,))
S1 = C.covariance_matrix(2.0, (N,))
GAUSS = Amplifier.gaussian(1.0)
BIN = Amplifier.binary(1.0)


def _w(seed, shape=(N,)):
    return np.asarray(jax.random.normal(jax.random.key(seed), shape, dtype=jnp.float64))


@pytest.mark.slow
def test_factor_half_from_differentiating_the_mse():
    # -∇L of the exact Gaussian MSE (no ½ in the loss) equals Eq. (5) with τ = 1 and the factor ½
    w = _w(0, (3, N))
    grad = jax.vmap(jax.grad(lambda w: gaussian.loss(w, S0, S1)))(jnp.asarray(w))
    field = effective_vector_field(w, GAUSS, S0, S1)
    np.testing.assert_allclose(field, -grad, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(-gaussian.flow(w, S0, S1), grad, rtol=1e-12, atol=1e-14)


@pytest.mark.slow
def test_gaussian_loss_and_gradient_by_monte_carlo():
    # MC over X | Y ~ N(0, Σ_Y), Y ~ Bernoulli(½): E[(Y - ReLU<w,X>)^2] and E[1(<w,X> >= 0) X | Y=1]
    key = jax.random.key(1)
    k1, k2, k3 = jax.random.split(key, 3)
    num = 60_000
    w = jnp.asarray(_w(2))
    y = jax.random.bernoulli(k1, 0.5, (num,)).astype(jnp.float64)
    r0, r1 = C.sqrt_matrix(0.7, (N,)), C.sqrt_matrix(2.0, (N,))
    z = jax.random.normal(k2, (num, N), dtype=jnp.float64)
    x = jnp.where(y[:, None] == 1, z @ r1.T, z @ r0.T)
    sq = (y - jax.nn.relu(x @ w)) ** 2
    se = float(jnp.std(sq)) / math.sqrt(num)
    assert abs(float(jnp.mean(sq)) - float(gaussian.loss(w, S0, S1))) < 5 * se
    x1 = jax.random.normal(k3, (num, N), dtype=jnp.float64) @ r1.T
    g = (x1 @ w >= 0)[:, None] * x1
    exact = S1 @ w / math.sqrt(2 * math.pi * float(w @ S1 @ w))
    se = np.asarray(jnp.std(g, axis=0)) / math.sqrt(num)
    assert np.all(np.abs(np.asarray(jnp.mean(g, 0)) - exact) < 5 * se)


@pytest.mark.slow
def test_vector_field_generic_callable_equals_amplifier():
    w = _w(3, (2, N))
    f1 = effective_vector_field(w, BIN, S0, S1)
    f2 = effective_vector_field(w, lambda a: jax.scipy.special.erf(a / jnp.sqrt(2 * (1 - a**2))), S0, S1)
    np.testing.assert_allclose(f1, f2, rtol=1e-13)
    a = amplifier_argument(w, S1)
    np.testing.assert_allclose(f1, 0.5 * (BIN(a) - w @ (S0 + S1)), rtol=1e-13)


@pytest.mark.slow
def test_argument_bounds_and_localized_weight_is_finite():
    a = amplifier_argument(_w(4, (5, N)), S1)
    assert np.all(np.abs(a) <= 1)
    e = np.zeros(N)
    e[3] = 2.5
    a = amplifier_argument(e, S1)
    assert float(a[3]) == 1.0
    f = effective_vector_field(e, BIN, S0, S1)
    assert np.all(np.isfinite(f))
    # w ∝ e_i: φ(1) = E|X| = 1 at i
    assert float(f[3]) == pytest.approx(0.5 * (1.0 - 2.5 * (S0[3, 3] + S1[3, 3])), rel=1e-13)


def _manual_euler(w, phi, lr, steps):
    out = []
    for _ in range(steps):
        a = S1 @ w / np.sqrt(w @ S1 @ w)
        w = w + lr * 0.5 * (np.asarray(phi(jnp.clip(a, -1, 1))) - (S0 + S1) @ w)
        out.append(w)
    return out


@pytest.mark.slow
def test_euler_matches_manual_loop_with_checkpoints():
    w0 = 0.1 * _w(5, (2, 3, N))
    lr, steps, ck = 0.05, 15, [0, 1, 7, 7, 15]
    traj = integrate_effective(w0, BIN, S0, S1, lr=lr, steps=steps, checkpoints=ck)
    assert isinstance(traj, Trajectory)
    assert traj.weights.shape == (2, 3, len(ck), N) and traj.weights.dtype == jnp.float64
    np.testing.assert_array_equal(traj.steps, ck)
    np.testing.assert_allclose(traj.times, np.asarray(ck) * lr, rtol=1e-15)
    for idx in [(0, 0), (1, 2)]:
        seq = [w0[idx]] + _manual_euler(w0[idx], BIN, lr, steps)
        for c, s in enumerate(ck):
            np.testing.assert_allclose(traj.weights[idx + (c,)], seq[s], rtol=1e-12, atol=1e-14)


@pytest.mark.slow
def test_int_checkpoints_and_gaussian_flow_is_gradient_descent():
    # with the Gaussian φ, Euler on Eq. (5) is exact expected-gradient descent on the MSE
    w0 = 0.05 * _w(6)
    lr, steps = 0.1, 30
    traj = integrate_effective(w0, GAUSS, S0, S1, lr=lr, steps=steps, checkpoints=4)
    np.testing.assert_array_equal(traj.steps, [0, 10, 20, 30])
    w = jnp.asarray(w0)
    for _ in range(steps):
        w = w + lr * gaussian.flow(w, S0, S1)
    np.testing.assert_allclose(traj.weights[-1], w, rtol=1e-12)


@pytest.mark.slow
def test_rk4_converges_to_fine_euler():
    w0 = 0.1 * _w(7)
    fine = integrate_effective(w0, BIN, S0, S1, lr=0.5, steps=4, checkpoints=1, substeps=2000).weights[-1]
    rk4 = integrate_effective(w0, BIN, S0, S1, lr=0.5, steps=4, checkpoints=1, method="rk4", substeps=4).weights[-1]
    euler = integrate_effective(w0, BIN, S0, S1, lr=0.5, steps=4, checkpoints=1).weights[-1]
    err_rk4 = float(jnp.linalg.norm(rk4 - fine))
    err_euler = float(jnp.linalg.norm(euler - fine))
    assert err_rk4 < 1e-3 * float(jnp.linalg.norm(fine)) and err_rk4 < 0.05 * err_euler


@pytest.mark.slow
def test_jacobian_equals_central_differences():
    w = _w(9)
    jac = effective_jacobian(w, BIN, S0, S1)
    h = 1e-6
    plus = np.asarray(effective_vector_field(w + h * np.eye(N), BIN, S0, S1))
    minus = np.asarray(effective_vector_field(w - h * np.eye(N), BIN, S0, S1))
    np.testing.assert_allclose(jac, (plus - minus).T / (2 * h), rtol=0, atol=1e-7)


@pytest.mark.slow
def test_fixed_point_of_the_linear_flow_and_its_spectrum():
    # linear phi: the constant mode r* 1, r* = sqrt(2/pi) a0 / mu(0), a0 = sqrt(lambda1(0) / N); the
    # Jacobian there has the radial eigenvalue -mu(0)/2 and (1/2)[mu(0) lambda1(k) / lambda1(0) - mu(k)]
    lam0, lam1 = (np.real(np.fft.fft(np.asarray(s)[0])) for s in (S0, S1))
    mu = lam0 + lam1
    r_star = math.sqrt(2 / math.pi) * math.sqrt(lam1[0] / N) / mu[0]
    start = r_star * (1 + 0.2 * np.cos(2 * np.pi * np.arange(N) / N) + 0.1)
    w_star, residual = effective_fixed_point(start, GAUSS, S0, S1)
    assert residual <= 1e-13
    np.testing.assert_allclose(w_star, np.full(N, r_star), rtol=1e-12)
    rates = 0.5 * (mu[0] * lam1 / lam1[0] - mu)
    rates[0] = -mu[0] / 2
    eig = np.sort(np.linalg.eigvals(effective_jacobian(w_star, GAUSS, S0, S1)).real)
    np.testing.assert_allclose(eig, np.sort(rates), rtol=0, atol=1e-12)


def test_fixed_point_validation():
    with pytest.raises(ValueError, match="Newton steps"):
        effective_fixed_point(_w(10), GAUSS, S0, S1, max_iter=1)
    with pytest.raises(ValueError, match="tol"):
        effective_fixed_point(_w(10), GAUSS, S0, S1, tol=-1.0)
    with pytest.raises(TypeError, match="max_iter"):
        effective_fixed_point(_w(10), GAUSS, S0, S1, max_iter=2.5)
    with pytest.raises(ValueError, match="w0 must be a single weight vector"):
        effective_fixed_point(_w(10, (2, N)), GAUSS, S0, S1)
    with pytest.raises(ValueError, match="w0 must be non-zero"):
        effective_fixed_point(np.zeros(N), GAUSS, S0, S1)
    with pytest.raises(ValueError, match="w must have last axis"):
        effective_jacobian(np.ones(3), GAUSS, S0, S1)


def test_validation_messages():
    w0 = _w(8)
    kw = dict(lr=0.1, steps=5, checkpoints=2)
    with pytest.raises(ValueError, match="lr"):
        integrate_effective(w0, BIN, S0, S1, lr=-0.1, steps=5, checkpoints=2)
    with pytest.raises(TypeError, match="steps"):
        integrate_effective(w0, BIN, S0, S1, lr=0.1, steps=5.0, checkpoints=2)
    with pytest.raises(ValueError, match="steps"):
        integrate_effective(w0, BIN, S0, S1, lr=0.1, steps=0, checkpoints=2)
    with pytest.raises(ValueError, match="checkpoints"):
        integrate_effective(w0, BIN, S0, S1, lr=0.1, steps=5, checkpoints=[0, 9])
    with pytest.raises(ValueError, match="method"):
        integrate_effective(w0, BIN, S0, S1, method="heun", **kw)
    with pytest.raises(ValueError, match="substeps"):
        integrate_effective(w0, BIN, S0, S1, substeps=0, **kw)
    with pytest.raises(ValueError, match="cov1 must have unit diagonal"):
        integrate_effective(w0, BIN, S0, 2 * S1, **kw)
    with pytest.raises(ValueError, match="cov0 must be symmetric"):
        integrate_effective(w0, BIN, S0 + np.triu(np.ones((N, N)), 1), S1, **kw)
    with pytest.raises(ValueError, match="cov0 must be a square"):
        integrate_effective(w0, BIN, S0[:, :3], S1, **kw)
    with pytest.raises(ValueError, match="cov0 and cov1"):
        integrate_effective(w0, BIN, S0[:3, :3], S1, **kw)
    with pytest.raises(ValueError, match="w0 must have last axis"):
        integrate_effective(w0[:5], BIN, S0, S1, **kw)
    with pytest.raises(ValueError, match="w0 must be non-zero"):
        integrate_effective(np.zeros(N), BIN, S0, S1, **kw)
    with pytest.raises(ValueError, match="w0 must be finite"):
        integrate_effective(np.full(N, np.nan), BIN, S0, S1, **kw)
    with pytest.raises(TypeError, match="phi must be callable"):
        integrate_effective(w0, 3.0, S0, S1, **kw)
    with pytest.raises(ValueError, match="w must be non-zero"):
        effective_vector_field(np.zeros(N), BIN, S0, S1)
    with pytest.raises(TypeError, match="w must be an array"):
        effective_vector_field("w", BIN, S0, S1)
    with pytest.raises(ValueError, match="w must be non-zero"):
        amplifier_argument(np.zeros(N), S1)
    with pytest.raises(ValueError, match="the flow is undefined where"):
        gaussian.flow(np.zeros(N), S0, S1)
    with pytest.raises(ValueError, match="cov0 and cov1 must have equal shapes"):
        gaussian.flow(w0, S0[:3, :3], S1)


def test_covariances_that_are_not_positive_semidefinite_are_refused():
    """The effective flow refuses a non-PSD covariance, naming it and its smallest eigenvalue.

    ``bad`` has unit diagonal (so only positive semi-definiteness fails); its smallest eigenvalue is
    1 - 0.45 (N - 1) < 0, on the constant vector.
    """
    bad = np.full((N, N), -0.45) + 1.45 * np.eye(N)
    smallest = 1.0 - 0.45 * (N - 1)
    assert np.linalg.eigvalsh(bad)[0] == pytest.approx(smallest)
    w0 = np.linspace(-1.0, 1.0, N)
    for cov0, cov1, name in ((bad, S1, "cov0"), (S0, bad, "cov1")):
        msg = f"{name} must be positive semi-definite .* smallest eigenvalue {smallest:.6g} "
        with pytest.raises(ValueError, match=msg):
            effective_vector_field(w0, GAUSS, cov0, cov1)
        with pytest.raises(ValueError, match=msg):
            integrate_effective(w0, GAUSS, cov0, cov1, lr=0.1, steps=2, checkpoints=2)
        with pytest.raises(ValueError, match=msg):
            effective_jacobian(w0, GAUSS, cov0, cov1)
