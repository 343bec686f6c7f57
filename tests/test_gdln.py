"""The GDLN theory (localization.theory.gdln, gdln_moments): closed forms against quadrature and
Monte Carlo (within stated standard errors), the exact solution against numerical integration,
exclusive and redundant gates, the OLS limit and the limiting loss, bad inputs."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.integrate as si
import scipy.special as sp

from localization import data
from localization.experiments import gdln as gx
from localization.theory import gates, gdln
from localization.theory import gdln_moments as gm

N = 10
TASK = data.LengthscaleTask.of(data.NLGP, xi=(1.0, 2.0), gain=3.0)


def _quadrature(g, r):
    def f(zj, zi):
        q = (zi * zi - 2 * r * zi * zj + zj * zj) / (2 * (1 - r * r))
        return sp.erf(g * zj) * np.exp(-q) / (2 * np.pi * math.sqrt(1 - r * r))

    return si.dblquad(f, 0, np.inf, -np.inf, np.inf, epsabs=1e-12, epsrel=1e-10)[0]


@pytest.mark.parametrize("g, r", [(0.5, 0.3), (3.0, 0.9), (0.01, -0.5), (10.0, 0.0), (2.0, -0.97)])
def test_gate_correlation_matches_two_dimensional_quadrature(g, r):
    assert float(gdln.gate_correlation(g, r)) == pytest.approx(_quadrature(g, r), abs=1e-8)


def test_gate_correlation_limits_and_broadcasting():
    # r = 1: E[1(Z>0) erf(gZ)] = arctan(sqrt(2) g)/pi; r = 0: independence gives 0; odd in r
    g = np.array([0.1, 1.0, 30.0])
    np.testing.assert_allclose(gdln.gate_correlation(g, 1.0), np.arctan(math.sqrt(2) * g) / np.pi, rtol=1e-14)
    assert float(gdln.gate_correlation(2.0, 0.0)) == 0.0
    r = np.linspace(-1, 1, 7)
    out = gdln.gate_correlation(g[:, None], r[None, :])
    assert out.shape == (3, 7) and out.dtype == np.float64
    np.testing.assert_allclose(out, -out[:, ::-1], atol=1e-15)
    # the notes' constant 2/sqrt(pi) (001 Eq. (72)) is 2 sqrt(pi) times too large
    notes = 2 / math.sqrt(math.pi) * np.arctan(math.sqrt(2) * 3.0 * 0.5 / math.sqrt(1 + 18 * 0.75))
    assert notes / float(gdln.gate_correlation(3.0, 0.5)) == pytest.approx(2 * math.sqrt(math.pi))


@pytest.mark.parametrize(
    "gain, r, error, match",
    [
        (0.0, 0.5, ValueError, "gain"),
        (-1.0, 0.5, ValueError, "gain"),
        (np.inf, 0.5, ValueError, "gain"),
        (1.0, 1.5, ValueError, "r must lie"),
        (1.0, np.nan, ValueError, "r must be finite"),
        ("a", 0.5, TypeError, "gain"),
        (1.0, True, TypeError, "r"),
    ],
)
def test_gate_correlation_bad_inputs(gain, r, error, match):
    with pytest.raises(error, match=match):
        gdln.gate_correlation(gain, r)


def _z_scores(mc, exact):
    zb = (mc.b - exact.b) / mc.b_se
    mask = mc.A_se > 0
    zA = (mc.A - exact.A)[mask] / mc.A_se[mask]
    return zb, zA


@pytest.mark.parametrize("model", ["NLGP", "Gaussian"])
@pytest.mark.slow
def test_coordinate_gate_closed_form_against_monte_carlo(model):
    task = TASK if model == "NLGP" else data.LengthscaleTask.of(data.Gaussian, xi=(1.0, 2.0))
    exact = gm.coordinate_gate_moments(task, N, 4)
    mc = gx.monte_carlo_moments(jax.random.key(7), gates.CoordinateGate(N, (4,)), task, 100_000, N)
    zb, zA = _z_scores(mc, exact)
    # 10 + 100 z-scores: |z| < 4.5 has probability ~1e-5 each under the null; rms near 1
    assert np.max(np.abs(zb)) < 4.5 and np.max(np.abs(zA)) < 4.5
    assert 0.7 < np.sqrt(np.mean(zA**2)) < 1.3


@pytest.mark.slow
def test_every_single_half_space_gate_has_the_same_second_moment():
    exact = gm.single_gate_second_moment(TASK, N)
    for gating in (gates.BumpGates(N, (3.0,), 1.5), gx.random_half_space_gates(jax.random.key(2), N, 1)):
        mc = gx.monte_carlo_moments(jax.random.key(8), gating, TASK, 100_000, N)
        z = (mc.A - exact) / mc.A_se
        assert np.max(np.abs(z)) < 4.5 and 0.7 < np.sqrt(np.mean(z**2)) < 1.3


@pytest.mark.slow
def test_monte_carlo_standard_errors_are_honest():
    # over 12 independent estimates, the spread of b matches the reported standard error (chi-square
    # of 12 x 10 values: ratio of rms deviation to mean se in [0.8, 1.2] with probability > 0.99)
    gating = gates.CoordinateGate(N, (0,))
    runs = [gx.monte_carlo_moments(jax.random.key(100 + s), gating, TASK, 4000, N) for s in range(12)]
    b = np.stack([r.b for r in runs])
    se = np.mean([r.b_se for r in runs], axis=0)
    ratio = np.sqrt(np.mean(((b - b.mean(0)) ** 2) * 12 / 11 / se**2))
    assert 0.8 < ratio < 1.2


def _random_system(d=6, seed=0, rank=None):
    rng = np.random.default_rng(seed)
    m = rng.normal(size=(d, rank or d))
    A = m @ m.T
    b = A @ rng.normal(size=d)  # in the range of A, as for GDLN moments
    return A, b, rng.normal(size=d)


@pytest.mark.parametrize("rank", [None, 3])
def test_flow_solution_matches_numerical_integration(rank):
    A, b, w0 = _random_system(rank=rank)
    ts = np.linspace(0, 2, 9)
    exact = gdln.flow_solution(A, b, w0, ts)
    sol = si.solve_ivp(lambda s, w: gdln.vector_field(A, b, w), (0, 2), w0, t_eval=ts, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(exact, sol.y.T, atol=1e-8)
    np.testing.assert_allclose(exact[0], w0, atol=1e-14)


def test_flow_is_the_gradient_flow_of_the_loss():
    # d/dt w = -grad L for L(w) = E[Y^2] - 2 b.w + w.A w (the population loss of y_hat = <w, x_tilde>)
    A, b, w0 = _random_system(seed=1)
    grad = jax.grad(lambda w: 0.5 - 2 * jnp.dot(b, w) + w @ A @ w)(jnp.asarray(w0))
    np.testing.assert_allclose(gdln.vector_field(A, b, w0), -np.asarray(grad), rtol=1e-12)


def test_singular_system_ends_at_least_norm_plus_null_component():
    A, b, w0 = _random_system(rank=3, seed=2)
    limit = gdln.ols_limit(A, b)
    assert limit.singular and limit.rank == 3
    np.testing.assert_allclose(limit.w, np.linalg.pinv(A) @ b, atol=1e-10)
    null = w0 - np.linalg.pinv(A) @ (A @ w0)
    np.testing.assert_allclose(gdln.flow_solution(A, b, w0, 400.0), limit.w + null, atol=1e-8)
    np.testing.assert_allclose(gdln.flow_solution(A, b, np.zeros(6), 400.0), limit.w, atol=1e-8)
    assert not gdln.ols_limit(*_random_system()[:2]).singular


@pytest.mark.slow
def test_exclusive_gates_learn_per_gate_ols():
    # gates 1(x_0 > 0) and 1(x_0 <= 0) never open together: A is block diagonal, each block's limit
    # is the regression of y on x restricted to its gate
    gating = gates.HalfSpaceGates(np.stack([np.eye(N)[0], -np.eye(N)[0]]))
    mc = gx.monte_carlo_moments(jax.random.key(3), gating, TASK, 20_000, N)
    assert np.all(mc.A[:N, N:] == 0.0)
    w = gdln.ols_limit(mc.A, mc.b).w
    for p in range(2):
        blk = slice(p * N, (p + 1) * N)
        np.testing.assert_allclose(w[blk], np.linalg.solve(mc.A[blk, blk], mc.b[blk]), rtol=1e-10)


def test_redundant_gates_keep_their_difference():
    exact = gm.coordinate_gate_moments(TASK, N, 2)
    A = np.block([[exact.A, exact.A], [exact.A, exact.A]])
    b = np.concatenate([exact.b, exact.b])
    rng = np.random.default_rng(4)
    w0 = rng.normal(size=2 * N)
    ts = np.array([0.0, 0.3, 5.0, 500.0])
    w = gdln.flow_solution(A, b, w0, ts)
    np.testing.assert_allclose(w[:, :N] - w[:, N:], np.broadcast_to(w0[:N] - w0[N:], (4, N)), atol=1e-10)
    delta = 0.5 * (w0[:N] - w0[N:])
    single = np.linalg.solve(exact.A, exact.b)
    np.testing.assert_allclose(w[-1, :N], 0.5 * single + delta, atol=1e-8)
    np.testing.assert_allclose(w[-1, N:], 0.5 * single - delta, atol=1e-8)


@pytest.mark.slow
def test_limiting_loss_and_loss_curve_against_monte_carlo():
    exact = gm.coordinate_gate_moments(TASK, N, 4)
    w = gdln.ols_limit(exact.A, exact.b).w
    gating = gates.CoordinateGate(N, (4,))
    x, y = TASK.sample_balanced(jax.random.key(5), 200_000, N)
    err = np.asarray((y - gm.predict(gating, w[None, :], x)) ** 2)
    mean, se = err.mean(), err.std() / math.sqrt(err.size)
    assert abs(mean - gdln.limiting_loss(exact.A, exact.b)) < 4.5 * se
    curve = gdln.loss_curve(exact.A, exact.b, [0.0, 1e-9, 1e4])
    assert curve[0] == 0.5 and curve[-1] == pytest.approx(gdln.limiting_loss(exact.A, exact.b), abs=1e-12)
    # early slope -2 |b|^2 / tau
    assert (curve[1] - 0.5) / 1e-9 == pytest.approx(-2 * exact.b @ exact.b / gdln.BOOK_TIME_CONSTANT, rel=1e-6)
    # the curve is the loss of the exact solution at every time
    for t in (0.2, 3.0):
        wt = gdln.flow_solution(exact.A, exact.b, np.zeros(N), t)
        direct = 0.5 - 2 * exact.b @ wt + wt @ exact.A @ wt
        assert gdln.loss_curve(exact.A, exact.b, [t])[0] == pytest.approx(direct, abs=1e-13)


def test_race_rates_are_scaled_eigenvalues():
    A, _, _ = _random_system()
    np.testing.assert_allclose(gdln.race_rates(A, 2.0), np.linalg.eigvalsh(A) / 2.0, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: gdln.flow_solution(np.eye(2), np.ones(3), np.zeros(2), 1.0), ValueError, "b must have shape"),
        (lambda: gdln.flow_solution(np.eye(2), np.ones(2), np.zeros(2), -1.0), ValueError, "t must"),
        (lambda: gdln.flow_solution(np.eye(2), np.ones(2), np.zeros(2), 1.0, 0.0), ValueError, "time_constant"),
        (lambda: gdln.ols_limit(np.array([[1.0, 2.0], [0.0, 1.0]]), np.ones(2)), ValueError, "symmetric"),
        (lambda: gdln.ols_limit(-np.eye(2), np.ones(2)), ValueError, "positive semi-definite"),
        (lambda: gdln.ols_limit(np.diag([1.0, 0.0]), np.ones(2)), ValueError, "range of A"),
        (lambda: gdln.ols_limit(np.full((2, 2), np.nan), np.ones(2)), ValueError, "finite"),
        (lambda: gdln.limiting_loss(np.eye(2), np.ones(2), 0.0), ValueError, "second_moment_y"),
        (lambda: gm.coordinate_gate_moments(TASK, N, N), ValueError, "coordinate"),
        (lambda: gm.coordinate_gate_moments("task", N, 0), TypeError, "task"),
        (lambda: gx.monte_carlo_moments(jax.random.key(0), "gate", TASK, 10, N), TypeError, "gating"),
        (lambda: gx.monte_carlo_moments(jax.random.key(0), gates.CoordinateGate(N), TASK, 10, N + 1), ValueError, "n"),
        (lambda: gm.predict(gates.CoordinateGate(N, (1,)), np.ones(3), np.ones(N)), ValueError, "w must have"),
    ],
)
def test_bad_inputs_are_named(call, error, match):
    with pytest.raises(error, match=match):
        call()
