"""experiments.gdln (gate agreement along a ReLU training run) and gates.FrozenReLUGates: Gaussian
closed forms against SymPy and Monte Carlo, properties of the estimator on constructed runs, bad
inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy as sp

from localization import data, initialisation, models, train
from localization.experiments import gdln as gf
from localization.theory import gates
from localization.trajectory import Trajectory

N = 12
TASK = data.LengthscaleTask.of(data.Gaussian, xi=(1.0, 3.0))
COV0, COV1 = TASK.covariances(N)


def _mixture_agreement(w, v):
    return 0.5 * (gates.gaussian_agreement(w, v, COV0) + gates.gaussian_agreement(w, v, COV1))


# ----- closed forms ------------------------------------------------------------------------------
def test_agreement_isotropic_closed_form_values():
    e1, e2 = np.eye(3)[0], np.eye(3)[1]
    assert gates.gaussian_agreement(e1, e1, np.eye(3)) == pytest.approx(1.0)
    assert gates.gaussian_agreement(e1, -e1, np.eye(3)) == pytest.approx(0.0, abs=1e-15)
    assert gates.gaussian_agreement(e1, e2, np.eye(3)) == pytest.approx(0.5)
    assert gates.gaussian_agreement(e1, e1 + e2, np.eye(3)) == pytest.approx(0.75)  # angle pi/4


@pytest.mark.slow
def test_agreement_is_one_minus_angle_over_pi_monte_carlo():
    # 1 - angle(w, v)/pi for X ~ N(0, I): Monte Carlo with 4e5 draws, within 5 binomial standard errors
    rng = np.random.default_rng(3)
    w, v = rng.normal(size=(2, 6, N))
    x = rng.normal(size=(400_000, N))
    mc = np.mean((x @ w.T > 0) == (x @ v.T > 0), axis=0)
    cos = np.sum(w * v, axis=1) / np.linalg.norm(w, axis=1) / np.linalg.norm(v, axis=1)
    exact = 1.0 - np.arccos(cos) / np.pi
    np.testing.assert_allclose(gates.gaussian_agreement(w, v, np.eye(N)), exact, rtol=1e-12)
    se = np.sqrt(exact * (1 - exact) / x.shape[0])
    assert np.all(np.abs(mc - exact) < 5 * se)


def test_agreement_correlated_covariance_monte_carlo():
    rng = np.random.default_rng(4)
    w, v = rng.normal(size=(2, 5, N))
    z = rng.normal(size=(400_000, N)) @ np.linalg.cholesky(COV1).T  # X ~ N(0, Sigma_1)
    mc = np.mean((z @ w.T > 0) == (z @ v.T > 0), axis=0)
    exact = gates.gaussian_agreement(w, v, COV1)
    se = np.sqrt(exact * (1 - exact) / z.shape[0])
    assert np.all(np.abs(mc - exact) < 5 * se)
    # the Euclidean angle is not the right one for a correlated covariance: it differs here by > 20 SE
    iso = gates.gaussian_agreement(w, v, np.eye(N))
    assert np.max(np.abs(iso - exact) / se) > 20


def test_agreement_properties():
    rng = np.random.default_rng(5)
    w, v = rng.normal(size=(2, 7, N))
    p = gates.gaussian_agreement(w, v, COV0)
    np.testing.assert_allclose(p, gates.gaussian_agreement(v, w, COV0), rtol=1e-13)  # symmetric
    np.testing.assert_allclose(gates.gaussian_agreement(3.0 * w, 0.5 * v, COV0), p, rtol=1e-12)  # scale-free
    np.testing.assert_allclose(gates.gaussian_agreement(w, -v, COV0), 1.0 - p, rtol=1e-12, atol=1e-15)  # sign flip
    assert np.all((p >= 0) & (p <= 1))
    # broadcasting: one w against many v
    np.testing.assert_allclose(
        gates.gaussian_agreement(w[0], v, COV0), gates.gaussian_agreement(np.tile(w[0], (7, 1)), v, COV0)
    )


@pytest.mark.slow
def test_mixture_kurtosis_sympy_and_monte_carlo():
    s0, s1 = sp.symbols("s0 s1", positive=True)
    m2 = (s0**2 + s1**2) / 2
    m4 = 3 * (s0**4 + s1**4) / 2  # E h^4 = 3 s^4 per Gaussian class
    assert sp.simplify(m4 / m2**2 - 3 - 3 * (s0**2 - s1**2) ** 2 / (s0**2 + s1**2) ** 2) == 0
    rng = np.random.default_rng(6)
    w = rng.normal(size=(3, N))
    kappa = gates.gaussian_mixture_kurtosis(w, COV0, COV1)
    x, _ = TASK.sample(jax.random.key(11), 400_000, N, jnp.float64)
    h = np.asarray(x) @ w.T
    d = h - h.mean(0)
    mc = np.mean(d**4, 0) / np.mean(d**2, 0) ** 2 - 3
    # SE of the plug-in excess kurtosis ~ sqrt(var(h^4)/M)/m2^2 <= 0.02 here; asserted within 0.05
    np.testing.assert_allclose(mc, kappa, atol=0.05)
    assert np.all(kappa > 0) and np.all(kappa < 3)
    # equal class variances (Sigma_0 = Sigma_1): zero excess kurtosis
    np.testing.assert_allclose(gates.gaussian_mixture_kurtosis(w, COV1, COV1), 0.0, atol=1e-15)


# ----- the estimator on runs -------------------------------------------------------------------
def _random_run(rng, C=6, units=(3,)):
    return rng.normal(size=units + (C, N))


@pytest.mark.slow
def test_gate_flips_matches_gaussian_closed_form():
    rng = np.random.default_rng(7)
    run = _random_run(rng)
    m = 200_000
    f = gf.gate_flips(jax.random.key(1), TASK, run, num=m)
    assert f.agreement.shape == (3, 5) and f.kurtosis.shape == (3, 6) and f.constant.shape == (3,)
    exact = _mixture_agreement(run[:, :-1], run[:, 1:])
    assert np.all(np.abs(np.asarray(f.agreement) - exact) < 5 * np.asarray(f.agreement_se))
    kappa = gates.gaussian_mixture_kurtosis(run, COV0, COV1)
    np.testing.assert_allclose(np.asarray(f.kurtosis), kappa, atol=0.08)


@pytest.mark.slow
def test_gate_flips_constant_run_and_scale_invariance():
    rng = np.random.default_rng(8)
    w = rng.normal(size=(2, N))
    scales = np.array([1.0, 2.0, 0.1, 7.0])[None, :, None]
    run = w[:, None, :] * scales  # the direction never changes: every gate stays fixed
    f = gf.gate_flips(jax.random.key(2), TASK, run, num=5000)
    np.testing.assert_array_equal(np.asarray(f.agreement), 1.0)
    np.testing.assert_array_equal(np.asarray(f.constant), 1.0)
    np.testing.assert_array_equal(np.asarray(f.agreement_se), 0.0)
    k = np.asarray(f.kurtosis)
    np.testing.assert_allclose(k, k[:, :1] * np.ones_like(k), rtol=1e-4)  # scale-free


@pytest.mark.slow
def test_gate_flips_sign_reversal_flips_every_gate():
    rng = np.random.default_rng(9)
    w = rng.normal(size=(N,))
    run = np.stack([w, -w, -w])  # (C=3, N): a single unit
    f = gf.gate_flips(jax.random.key(3), TASK, run, num=3000)
    np.testing.assert_array_equal(np.asarray(f.agreement), [0.0, 1.0])
    assert float(f.constant) == 0.0


@pytest.mark.slow
def test_constant_is_at_most_every_agreement_and_bounded_by_union():
    rng = np.random.default_rng(10)
    run = _random_run(rng, C=5, units=(4,)) * 0.3 + rng.normal(size=(4, 1, N))  # small moves
    f = gf.gate_flips(jax.random.key(4), TASK, run, num=20_000)
    a, c = np.asarray(f.agreement), np.asarray(f.constant)
    assert np.all(c <= a.min(axis=-1) + 1e-7)
    assert np.all(c >= 1.0 - np.sum(1.0 - a, axis=-1) - 1e-6)  # union bound on the flips


@pytest.mark.slow
def test_gate_flips_on_training_trajectories_and_axes():
    task = data.LengthscaleTask.of(data.NLGP, xi=(1.0, 3.0), gain=3.0)
    w0 = initialisation.init_weights(jax.random.key(5), N, 1e-3, num=2, dtype=jnp.float32)
    run = train.train_online(jax.random.key(6), task, w0, lr=0.05, batch=200, steps=40, checkpoints=5)
    f = gf.gate_flips(jax.random.key(7), task, run, num=1000)
    assert f.agreement.shape == (2, 4) and f.kurtosis.shape == (2, 5)
    g = gf.gate_flips(jax.random.key(7), task, np.moveaxis(np.asarray(run.weights), 1, 0), num=1000, checkpoint_axis=0)
    np.testing.assert_array_equal(np.asarray(f.agreement), np.asarray(g.agreement))
    p0 = initialisation.init_params(jax.random.key(8), 3, N, 1.0, num=2, dtype=jnp.float32)
    com = train.train_online(
        jax.random.key(6), task, p0, lr=0.01, batch=200, steps=40, checkpoints=5, model="committee", activation="relu"
    )
    h = gf.gate_flips(jax.random.key(7), task, com, num=1000)
    assert h.agreement.shape == (2, 3, 4) and h.constant.shape == (2, 3)
    assert np.all((np.asarray(h.agreement) >= 0) & (np.asarray(h.agreement) <= 1))


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"num": 1}, ValueError, "num"),
        ({"num": 2.5}, TypeError, "num"),
        ({"num": 10, "checkpoint_axis": -1}, ValueError, "checkpoint_axis"),
        ({"num": 10, "checkpoint_axis": 2}, ValueError, "checkpoint_axis"),
        ({"num": 10, "checkpoint_axis": 1.0}, TypeError, "checkpoint_axis"),
    ],
)
def test_gate_flips_bad_arguments(kwargs, exc, match):
    run = np.ones((3, 4, N))
    with pytest.raises(exc, match=match):
        gf.gate_flips(jax.random.key(0), TASK, run, **kwargs)


def test_gate_flips_bad_runs():
    k = jax.random.key(0)
    with pytest.raises(ValueError, match="at least 2 checkpoints"):
        gf.gate_flips(k, TASK, np.ones((1, N)), num=10)
    bad = np.ones((3, N))
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="finite"):
        gf.gate_flips(k, TASK, bad, num=10)
    zero = np.ones((3, N))
    zero[2] = 0.0
    with pytest.raises(ValueError, match="zero vector"):
        gf.gate_flips(k, TASK, zero, num=10)
    with pytest.raises(TypeError, match="task"):
        gf.gate_flips(k, object(), np.ones((3, N)), num=10)
    traj = Trajectory(times=np.arange(3.0), steps=np.arange(3), weights=np.ones((3, N)))
    with pytest.raises(TypeError, match="checkpoint_axis"):
        gf.gate_flips(k, TASK, traj, num=10, checkpoint_axis=0)


def test_closed_forms_bad_inputs():
    w = np.ones(N)
    with pytest.raises(ValueError, match="cov"):
        gates.gaussian_agreement(w, w, np.ones((N, N + 1)))
    with pytest.raises(ValueError, match="symmetric"):
        gates.gaussian_agreement(w, w, np.triu(np.ones((N, N))))
    with pytest.raises(ValueError, match="semi-definite"):
        gates.gaussian_agreement(w, w, -np.eye(N))
    with pytest.raises(ValueError, match="w\\^T cov w"):
        gates.gaussian_agreement(np.zeros(N), w, np.eye(N))
    with pytest.raises(ValueError, match="same last axis"):
        gates.gaussian_agreement(w, np.ones(N + 1), np.eye(N))
    with pytest.raises(ValueError, match="finite"):
        gates.gaussian_mixture_kurtosis(np.full(N, np.inf), COV0, COV1)
    with pytest.raises(TypeError):
        gates.gaussian_mixture_kurtosis("w", COV0, COV1)


# ----- FrozenReLUGates -------------------------------------------------------------------------
def test_frozen_relu_gates_are_the_units_gates():
    rng = np.random.default_rng(12)
    w = rng.normal(size=(4, 3, N))  # (C, P, N)
    g = gates.FrozenReLUGates.at(np.arange(4) * 0.5, w, 2)
    assert isinstance(g, gates.Gating) and g.num_gates == 3 and g.num_dims == N and g.time == 1.0
    x = rng.normal(size=(50, N))
    np.testing.assert_array_equal(np.asarray(g(x)), (x @ w[2].T > 0).astype(float))
    # the gate is the ReLU's derivative: ReLU(<w, x>) = g(x) <w, x>
    np.testing.assert_allclose(np.asarray(g(x)) * (x @ w[2].T), np.maximum(x @ w[2].T, 0.0))
    # a pytree: traced under jit, same values
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda gg, xx: gg(xx))(g, x)), np.asarray(g(x)))
    one = gates.FrozenReLUGates.at(np.arange(4.0), w[:, 0], -1)  # a single neuron's run (C, N)
    assert one.num_gates == 1 and one.time == 3.0


def test_frozen_relu_gates_bad_inputs():
    w = np.ones((2, N))
    with pytest.raises(ValueError, match="non-zero"):
        gates.FrozenReLUGates(np.zeros((2, N)))
    with pytest.raises(ValueError, match="time"):
        gates.FrozenReLUGates(w, -1.0)
    with pytest.raises(ValueError, match="index"):
        gates.FrozenReLUGates.at(np.arange(3.0), np.ones((3, 2, N)), 3)
    with pytest.raises(ValueError, match="same C"):
        gates.FrozenReLUGates.at(np.arange(4.0), np.ones((3, 2, N)), 0)
    with pytest.raises(ValueError, match="x"):
        gates.FrozenReLUGates(w)(np.ones((3, N + 1)))


# ----- the OLS field of the frozen own gate; aligned distance ------------------------------------
def _gaussian_drive(w):
    """b(w) = E_1[1(<w,X> > 0) X] / 2 = Sigma_1 w / (2 sqrt(2 pi w^T Sigma_1 w)) for Gaussian class 1."""
    return COV1 @ w / (2.0 * np.sqrt(2.0 * np.pi * w @ COV1 @ w))


def test_frozen_gate_field_gaussian_closed_form():
    rng = np.random.default_rng(13)
    w = rng.normal(size=(3, N))
    fr = gf.frozen_gate_field(jax.random.key(9), TASK, w, num=100_000)
    A = 0.25 * (COV0 + COV1)
    for k in range(3):
        b = _gaussian_drive(w[k])
        assert np.all(np.abs(fr.drive[k] - b) < 5 * fr.drive_se[k])
        exact = np.linalg.solve(A, b)
        assert np.all(np.abs(fr.field[k] - exact) < 5 * fr.field_se[k])
    assert fr.field.shape == w.shape and fr.num == 100_000


def test_relu_flow_is_twice_drive_minus_A_w():
    # the ReLU neuron's loss gradient (autodiff on 4e5 samples) equals -2 (b(w) - A w), A = (S0 + S1)/4,
    # with b(w) in closed form for Gaussian data; the Monte Carlo error is ~1e-3 of the norm here
    rng = np.random.default_rng(14)
    w = rng.normal(size=N)
    x, y = TASK.sample(jax.random.key(10), 400_000, N, jnp.float64)
    grad = np.asarray(jax.grad(lambda v: models.mse(v, x, y))(jnp.asarray(w)))
    exact = -2.0 * (_gaussian_drive(w) - 0.25 * (COV0 + COV1) @ w)
    assert np.linalg.norm(grad - exact) < 0.02 * np.linalg.norm(exact)


def test_aligned_distance_properties():
    i = np.arange(N)
    ref = np.exp(-((i - 5.0) ** 2) / 4.0)
    assert gf.aligned_distance(-3.0 * np.roll(ref, 7), ref) == pytest.approx(0.0, abs=1e-12)
    other = np.exp(-((i - 9.0) ** 2) / 30.0)  # a wider bump, elsewhere
    d = gf.aligned_distance(np.stack([other, -other]), ref)
    assert d.shape == (2,) and d[0] == pytest.approx(d[1]) and 0.1 < d[0] < 2
    assert d[0] == pytest.approx(np.linalg.norm(np.roll(other, -4) / np.linalg.norm(other) - ref / np.linalg.norm(ref)))
    with pytest.raises(ValueError, match="reference"):
        gf.aligned_distance(ref, ref[:-1])
    with pytest.raises(ValueError, match="zero vector"):
        gf.aligned_distance(np.zeros(N), ref)


def test_frozen_gate_field_bad_inputs():
    k = jax.random.key(0)
    with pytest.raises(TypeError, match="LengthscaleTask"):
        gf.frozen_gate_field(k, object(), np.ones(N), num=10)
    with pytest.raises(ValueError, match="zero vector"):
        gf.frozen_gate_field(k, TASK, np.zeros((2, N)), num=10)
    with pytest.raises(ValueError, match="num"):
        gf.frozen_gate_field(k, TASK, np.ones(N), num=1)
