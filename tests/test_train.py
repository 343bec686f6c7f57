"""Tests for localization.train: gradients, SGD vs the exact Gaussian gradient flow, vmap/sweep
equivalences, reproducibility, checkpoints and argument validation."""

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from localization import initialisation, models, sgd, traced_task, train, trajectory
from localization.data import NLGP, Gaussian, LengthscaleTask
from localization.data import spectral as _covariance
from localization.prng import splitmix_key

N = 10
XI = (1.0, 3.0)


def gaussian_task():
    return LengthscaleTask(Gaussian(XI[0]), Gaussian(XI[1]))


def covariances(n=N):
    return (_covariance.covariance_matrix(XI[0], (n,)), _covariance.covariance_matrix(XI[1], (n,)))


def exact_flow(w0, lr, steps, s0, s1):
    """Forward Euler (step lr) of the exact expected-gradient flow for Gaussian data:
    dw/dt = Σ1 w / sqrt(2π wᵀΣ1w) − ½(Σ0+Σ1) w   (E[1(⟨w,X⟩≥0) X | Y=1] in closed form)."""
    w = np.array(w0, dtype=np.float64)
    out = [w.copy()]
    for _ in range(steps):
        u = s1 @ w
        w = w + lr * (u / math.sqrt(2 * math.pi * (w @ u)) - 0.5 * (s0 + s1) @ w)
        out.append(w.copy())
    return np.array(out)


# --------------------------------------------------------------------------------------- gradients
@pytest.mark.slow
def test_mse_gradient_matches_analytic_formulas():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 6))
    y = rng.integers(0, 2, size=50).astype(float)
    w = rng.normal(size=6)
    g = jax.grad(lambda w: models.mse(w, x, y))(w)
    h = x @ w
    analytic = 2.0 / 50 * ((np.maximum(h, 0) - y) * (h > 0)) @ x  # ∇ (1/M) Σ (y − ReLU(h))²
    np.testing.assert_allclose(g, analytic, rtol=1e-13)
    # committee machine with erf units: ŷ = (1/K) Σ_k erf(h_k/√2), σ'(h) = √(2/π) exp(−h²/2)
    Wk = rng.normal(size=(3, 6))
    gW = jax.grad(lambda W: models.mse(W, x, y, model="committee", activation="erf"))(Wk)
    H = x @ Wk.T
    yhat = np.mean(np.vectorize(math.erf)(H / math.sqrt(2)), axis=1)
    dsig = math.sqrt(2 / math.pi) * np.exp(-(H**2) / 2)
    analytic_W = 2.0 / 50 * (((yhat - y)[:, None] * dsig / 3).T @ x)
    np.testing.assert_allclose(gW, analytic_W, rtol=1e-12)
    assert float(models.mse(w, x, y)) == pytest.approx(np.mean((y - np.maximum(h, 0)) ** 2), rel=1e-14)


@pytest.mark.slow
def test_one_step_of_gd_is_w_minus_lr_grad_for_every_model():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(64, 8))
    y = (rng.random(64) < 0.5).astype(float)
    key = jax.random.key(0)
    cases = [
        ("neuron", "relu", rng.normal(size=8)),
        ("committee", "sigmoid", initialisation.init_params(key, 3, 8, 1.0, bias=True)),
        ("two_layer", "erf", initialisation.init_params(key, 3, 8, 1.0, model="two_layer", bias=True)),
    ]
    for model, act, p in cases:
        tr = train.train_on_data(x, y, p, lr=0.3, steps=1, checkpoints=[0, 1], model=model, activation=act)
        g = jax.grad(lambda q, model=model, act=act: models.mse(q, x, y, model=model, activation=act))(p)
        expect = jax.tree_util.tree_map(lambda a, b: a - 0.3 * b, p, g)
        got = jax.tree_util.tree_map(lambda a: a[1], tr.weights)
        for e, o in zip(jax.tree_util.tree_leaves(expect), jax.tree_util.tree_leaves(got), strict=True):
            np.testing.assert_allclose(o, e, rtol=1e-12, atol=1e-15)


# --------------------------------------------------------------------------------------- vs theory
@pytest.mark.slow
def test_online_sgd_follows_the_exact_gaussian_gradient_flow():
    """Small learning rate: SGD noise averages out, so the trajectory equals the forward-Euler
    solution of the closed-form expected-gradient flow. (The flow passes near saddles, where the
    O(1/sqrt(B)) noise is amplified: measured relative deviation at t = 2 of 2.4 %, 1.0 %, 0.4 % for
    B = 4000, 16 000, 64 000, shrinking like 1/sqrt(B), i.e. noise, not bias.)"""
    s0, s1 = covariances()
    w0 = 0.3 * np.random.default_rng(2).normal(size=N)
    lr, steps = 0.02, 100  # t = 2
    tr = train.train_online(
        jax.random.key(5), gaussian_task(), w0, lr=lr, batch=20_000, steps=steps, checkpoints=5, dtype=jnp.float64
    )
    ref = exact_flow(w0, lr, steps, s0, s1)[np.asarray(tr.steps)]
    np.testing.assert_allclose(np.asarray(tr.times), np.asarray(tr.steps) * lr, rtol=1e-15)
    err = np.linalg.norm(np.asarray(tr.weights) - ref, axis=-1) / np.linalg.norm(ref, axis=-1)
    assert np.max(err) < 0.03, err
    # the flow moved the weights far from w0, so the comparison is not trivial
    assert np.linalg.norm(ref[-1] - ref[0]) > 0.4 * np.linalg.norm(ref[0])


@pytest.mark.slow
def test_full_batch_gd_on_a_huge_batch_follows_the_exact_flow():
    """One fixed batch of 200 000: the finite-sample error of the gradient is frozen in, so the
    deviation is noise of order 1/sqrt(B) amplified near saddles (over keys 0-7: max relative
    deviation 0.011-0.037, mean 0.021); a wrong covariance or gradient gives O(1)."""
    s0, s1 = covariances()
    w0 = 0.3 * np.random.default_rng(3).normal(size=(2, N))
    lr, steps = 0.05, 40  # t = 2
    tr = train.train_full_batch(
        jax.random.key(6),
        gaussian_task(),
        w0,
        lr=lr,
        batch=200_000,
        steps=steps,
        checkpoints=[0, 20, 40],
    )
    assert tr.weights.dtype == jnp.float32
    for i in range(2):
        ref = exact_flow(w0[i], lr, steps, s0, s1)[[0, 20, 40]]
        err = np.linalg.norm(np.asarray(tr.weights[i]) - ref, axis=-1) / np.linalg.norm(ref, axis=-1)
        assert np.max(err) < 0.05, err


# --------------------------------------------------------------------------------------- structure
# one configuration (task structure, batch, C = 3 checkpoints, record_loss) shared by the next tests,
# so that they reuse two compilations (I = 1 and I = 3 initialisations)
NLGP_TASK = LengthscaleTask(NLGP(XI[0], 3.0), NLGP(XI[1], 3.0))
KW = dict(lr=0.05, batch=500, record_loss=True)


@pytest.mark.slow
def test_vmapped_inits_equal_separate_runs_and_are_reproducible():
    w0 = initialisation.init_weights(jax.random.key(1), N, 0.01, num=3)
    key = jax.random.key(7)
    tr = train.train_online(key, NLGP_TASK, w0, steps=40, checkpoints=[0, 10, 40], **KW)
    assert tr.weights.shape == (3, 3, N) and tr.weights.dtype == jnp.float32
    assert tr.loss.shape == (3, 3)
    np.testing.assert_array_equal(tr.steps, [0, 10, 40])
    np.testing.assert_allclose(tr.weights[:, 0], np.asarray(w0, np.float32), rtol=0)
    for i in range(3):
        single = train.train_online(key, NLGP_TASK, w0[i], steps=40, checkpoints=[0, 10, 40], **KW)
        assert single.weights.shape == (3, N)
        np.testing.assert_allclose(single.weights, tr.weights[i], rtol=2e-5, atol=1e-7)
        np.testing.assert_allclose(single.loss, tr.loss[i], rtol=2e-5)
    again = train.train_online(key, NLGP_TASK, w0, steps=40, checkpoints=[0, 10, 40], **KW)
    np.testing.assert_array_equal(again.weights, tr.weights)
    other = train.train_online(jax.random.key(8), NLGP_TASK, w0, steps=40, checkpoints=[0, 10, 40], **KW)
    assert not np.allclose(other.weights[:, -1], tr.weights[:, -1])
    # leading axes of any shape
    tr2 = train.train_online(key, NLGP_TASK, w0.reshape(3, 1, N), steps=40, checkpoints=[0, 10, 40], **KW)
    assert tr2.weights.shape == (3, 1, 3, N)
    np.testing.assert_array_equal(tr2.weights[:, 0], tr.weights)


@pytest.mark.slow
def test_per_init_streams_are_independent_runs_and_reproducible():
    """streams="per_init": initialisation i trains alone on the stream of fold_in(key, i) (so equal
    initial weights end apart); the same key repeats the run; the default shares one stream."""
    w0 = np.tile(np.asarray(initialisation.init_weights(jax.random.key(1), N, 0.01)), (3, 1))  # three equal starts
    key = jax.random.key(7)
    ck = [0, 10, 40]
    own = train.train_online(key, NLGP_TASK, w0, steps=40, checkpoints=ck, streams="per_init", **KW)
    assert own.weights.shape == (3, 3, N) and own.loss.shape == (3, 3)
    for i in range(3):
        alone = train.train_online(jax.random.fold_in(key, i), NLGP_TASK, w0[i], steps=40, checkpoints=ck, **KW)
        np.testing.assert_allclose(own.weights[i], alone.weights, rtol=2e-5, atol=1e-7)
        np.testing.assert_allclose(own.loss[i], alone.loss, rtol=2e-5)
    final = np.asarray(own.weights[:, -1])
    assert min(np.abs(final[i] - final[j]).max() for i, j in [(0, 1), (0, 2), (1, 2)]) > 1e-3
    again = train.train_online(key, NLGP_TASK, w0, steps=40, checkpoints=ck, streams="per_init", **KW)
    np.testing.assert_array_equal(again.weights, own.weights)
    shared = train.train_online(key, NLGP_TASK, w0, steps=40, checkpoints=ck, **KW)
    np.testing.assert_array_equal(shared.weights[0], shared.weights[2])  # one stream: equal starts stay equal
    # sweeps: initialisation i has its own stream, the same for every task
    tasks = [LengthscaleTask(NLGP(XI[0], g), NLGP(XI[1], g)) for g in (3.0, 50.0)]
    sw = train.train_sweep(key, tasks, w0, steps=40, checkpoints=ck, streams="per_init", **KW)
    assert sw.weights.shape == (2, 3, 3, N)
    for p, t in enumerate(tasks):
        single = train.train_online(key, t, w0, steps=40, checkpoints=ck, streams="per_init", **KW)
        np.testing.assert_allclose(sw.weights[p], single.weights, rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match=r"streams must be one of \('shared', 'per_init'\), got 'each'"):
        train.train_online(key, NLGP_TASK, w0, steps=2, streams="each", **KW)
    with pytest.raises(ValueError, match="streams must be one of"):
        train.train_sweep(key, tasks, w0, steps=2, streams=None, **KW)


def test_data_stream_does_not_depend_on_steps_or_checkpoints():
    w0 = 0.1 * np.ones(N)
    key = jax.random.key(11)
    long = train.train_online(key, NLGP_TASK, w0, steps=30, checkpoints=[0, 12, 30], **KW)
    short = train.train_online(key, NLGP_TASK, w0, steps=12, checkpoints=[0, 6, 12], **KW)
    np.testing.assert_array_equal(short.weights[-1], long.weights[1])
    np.testing.assert_array_equal(short.loss[-1], long.loss[1])
    np.testing.assert_array_equal(short.steps, [0, 6, 12])


@pytest.mark.slow
def test_recorded_loss_is_the_batch_loss_of_that_step():
    w0 = 0.2 * np.ones(N)
    key = jax.random.key(12)
    tr = train.train_online(key, NLGP_TASK, w0, steps=7, checkpoints=[0, 3, 7], **KW)
    # the batch of step t is task.sample(fold_in(key, t)) with the (default) SplitMix64-bits key
    x, y = NLGP_TASK.sample(jax.random.fold_in(splitmix_key(key), 7), 500, N, jnp.float32)
    assert float(tr.loss[-1]) == pytest.approx(float(models.mse(tr.weights[-1], x, y)), rel=1e-5)
    x, y = NLGP_TASK.sample(jax.random.fold_in(splitmix_key(key), 0), 500, N, jnp.float32)
    assert float(tr.loss[0]) == pytest.approx(float(models.mse(jnp.asarray(w0, jnp.float32), x, y)), rel=1e-5)


@pytest.mark.slow
def test_sweep_equals_individual_runs():
    gains = [0.5, 3.0, 50.0]
    tasks = [LengthscaleTask(NLGP(XI[0], g), NLGP(XI[1], g)) for g in gains]
    w0 = initialisation.init_weights(jax.random.key(2), N, 0.01, num=3)
    key = jax.random.key(9)
    sw = train.train_sweep(key, tasks, w0, steps=20, checkpoints=[0, 10, 20], **KW)
    assert sw.weights.shape == (3, 3, 3, N) and sw.loss.shape == (3, 3, 3)
    for p, t in enumerate(tasks):
        single = train.train_online(key, t, w0, steps=20, checkpoints=[0, 10, 20], **KW)
        np.testing.assert_allclose(sw.weights[p], single.weights, rtol=1e-4, atol=1e-6)
    stacked = traced_task.stack_tasks(tasks)
    assert stacked.model0.gain.shape == (3,) and stacked.model0.gain.dtype == jnp.float32


def test_balanced_labels_follow_the_flow_too():
    s0, s1 = covariances()
    w0 = 0.3 * np.random.default_rng(4).normal(size=N)
    lr, steps = 0.02, 100
    tr = train.train_online(
        jax.random.key(13),
        gaussian_task(),
        w0,
        lr=lr,
        batch=20_000,
        steps=steps,
        checkpoints=1,
        balanced=True,
    )
    ref = exact_flow(w0, lr, steps, s0, s1)[-1]
    assert np.linalg.norm(np.asarray(tr.weights[-1]) - ref) / np.linalg.norm(ref) < 0.03


@pytest.mark.slow
def test_committee_and_grid_inputs_run_with_correct_shapes():
    task = LengthscaleTask(Gaussian(1.0), Gaussian(2.0))
    p = initialisation.init_params(jax.random.key(0), 4, 36, 0.1, bias=True, num=2)
    tr = train.train_online(
        jax.random.key(1),
        task,
        p,
        lr=0.5,
        batch=100,
        steps=5,
        checkpoints=2,
        n=(6, 6),
        model="committee",
        activation="sigmoid",
    )
    assert tr.weights.w.shape == (2, 2, 4, 36) and tr.weights.b.shape == (2, 2, 4)
    np.testing.assert_allclose(tr.weights.w[:, 0], np.asarray(p.w, np.float32))


# --------------------------------------------------------------------------------------- validation
def test_checkpoint_steps():
    np.testing.assert_array_equal(trajectory.checkpoint_steps(3, 10), [0, 5, 10])
    np.testing.assert_array_equal(trajectory.checkpoint_steps(1, 10), [10])
    np.testing.assert_array_equal(trajectory.checkpoint_steps(50, 3), [0, 1, 2, 3])
    with pytest.raises(ValueError, match="checkpoints must lie in"):
        trajectory.checkpoint_steps([0, 11], 10)
    with pytest.raises(ValueError, match="non-decreasing"):
        trajectory.checkpoint_steps([5, 1], 10)
    with pytest.raises(TypeError, match="checkpoints must be an int or"):
        trajectory.checkpoint_steps([0.5], 10)
    with pytest.raises(TypeError, match="checkpoints"):
        trajectory.checkpoint_steps(None, 10)
    with pytest.raises(ValueError, match="checkpoints must be an integer >= 1"):
        trajectory.checkpoint_steps(0, 10)


def test_train_validation_names_the_parameter():
    task = gaussian_task()
    key = jax.random.key(0)
    w0 = np.ones(N)
    ok = dict(lr=0.1, batch=8, steps=2)
    bad = [
        (ValueError, "lr must be positive", dict(lr=0.0)),
        (TypeError, "lr must be a real number", dict(lr="a")),
        (ValueError, "batch must be an integer >= 1", dict(batch=0)),
        (TypeError, "batch must be an integer", dict(batch=2.0)),
        (ValueError, "steps must be an integer >= 0", dict(steps=-1)),
        (ValueError, "checkpoints must lie in", dict(checkpoints=[0, 3])),
        (ValueError, "model must be one of", dict(model="cnn")),
        (ValueError, "activation must be one of", dict(activation="tanh")),
        (ValueError, "activation must be 'relu'", dict(activation="erf")),
        (TypeError, "dtype must be", dict(dtype=jnp.int32)),
        (TypeError, "record_loss must be a bool", dict(record_loss=1)),
        (TypeError, "balanced must be a bool", dict(balanced="yes")),
        (ValueError, "prng must be one of", dict(prng="mt19937")),
        (ValueError, r"n = \(3, 3\) has prod\(n\) = 9", dict(n=(3, 3))),
        (ValueError, "n must be an integer >= 1", dict(n=0)),
    ]
    for exc, msg, kw in bad:
        with pytest.raises(exc, match=msg):
            train.train_online(key, task, w0, **{**ok, **kw})
    with pytest.raises(TypeError, match="key must be a single JAX PRNG key"):
        train.train_online(0, task, w0, **ok)
    with pytest.raises(TypeError, match="task must have a sample"):
        train.train_online(key, object(), w0, **ok)
    with pytest.raises(ValueError, match="w0 must be finite"):
        train.train_online(key, task, np.full(N, np.nan), **ok)
    with pytest.raises(TypeError, match="w0 must be an array"):
        train.train_online(key, task, "w", **ok)
    with pytest.raises(TypeError, match=r"w0 must be an \(\.\.\., N\) array"):
        train.train_online(key, task, models.Params(np.ones((2, N))), **ok)
    with pytest.raises(TypeError, match="w0 must be a localization.models.Params"):
        train.train_online(key, task, np.ones((2, N)), model="two_layer", **ok)
    with pytest.raises(ValueError, match="w0.a"):
        train.train_online(key, task, models.Params(np.ones((2, N))), model="two_layer", **ok)
    with pytest.raises(ValueError, match=r"w0.b must have shape \(2,\)"):
        train.train_online(key, task, models.Params(np.ones((2, N)), b=np.ones(3)), model="committee", **ok)
    with pytest.raises(TypeError, match="balanced=True needs a task with sample_balanced"):
        train.train_online(key, Gaussian(1.0), w0, balanced=True, **ok)


def test_sweep_and_data_validation():
    key = jax.random.key(0)
    w0 = np.ones(N)
    t1 = LengthscaleTask(NLGP(1.0, 1.0), NLGP(3.0, 1.0))
    t2 = LengthscaleTask(NLGP(1.0, 2.0), NLGP(2.0, 2.0))  # different static xi
    with pytest.raises(ValueError, match="tasks must share one structure"):
        train.train_sweep(key, [t1, t2], w0, lr=0.1, batch=4, steps=1)
    with pytest.raises(TypeError, match="tasks must be a non-empty sequence"):
        traced_task.stack_tasks([])
    with pytest.raises(TypeError, match="tasks must be pytrees with numeric leaves"):
        traced_task.stack_tasks([object(), object()])
    x = np.ones((5, N))
    with pytest.raises(ValueError, match="x must be"):
        train.train_on_data(x, np.ones(4), w0, lr=0.1, steps=1)
    with pytest.raises(ValueError, match="x must have N = 10 columns"):
        train.train_on_data(np.ones((5, 3)), np.ones(5), w0, lr=0.1, steps=1)
    with pytest.raises(TypeError, match="y must be an array"):
        train.train_on_data(x, None, w0, lr=0.1, steps=1)
    with pytest.raises(ValueError, match="x must be"):
        models.mse(w0, x, np.ones(3))
    with pytest.raises(ValueError, match="batch must be an integer >= 1"):
        train.train_full_batch(key, gaussian_task(), w0, lr=0.1, batch=0, steps=1)
    with pytest.raises(TypeError, match="task must have a sample"):
        train.train_full_batch(key, None, w0, lr=0.1, batch=3, steps=1)


@pytest.mark.slow
def test_train_online_inside_jit_equals_the_eager_call():
    """Concrete inputs are prepared on the host; traced ones (train_online called under jit) take the
    jnp path and give the same trajectory."""
    w0 = np.full((2, N), 0.1)
    run = lambda w: train.train_online(  # noqa: E731
        jax.random.key(0), gaussian_task(), w, lr=0.1, batch=16, steps=5, checkpoints=3, record_loss=True
    )
    eager = run(w0)
    weights, loss = jax.jit(lambda w: (run(w).weights, run(w).loss))(w0)
    assert weights.shape == (2, 3, N) and loss.shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(weights), np.asarray(eager.weights))
    np.testing.assert_array_equal(np.asarray(loss), np.asarray(eager.loss))
    with pytest.raises(ValueError, match="w0 must be finite"):
        run(np.full((2, N), np.inf))


# --------------------------------------------------------------------------------------- settings
def test_online_settings_validate_once_and_normalise():
    s = sgd.OnlineSettings(lr=1, batch=4, steps=10, checkpoints=np.array([0, 5, 10]), n=10, dtype="float32")
    assert (s.lr, s.checkpoints, s.n, s.dtype) == (1.0, (0, 5, 10), (10,), np.dtype("float32"))
    assert isinstance(s.lr, float) and sgd.OnlineSettings(lr=0.1, batch=1, steps=3).checkpoints == 101
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.lr = 2.0
    bad = [
        (ValueError, "lr must be positive", dict(lr=0.0)),
        (ValueError, "batch must be an integer >= 2", dict(batch=1, balanced=True)),
        (ValueError, r"streams must be one of \('shared', 'per_init'\), got 'each'", dict(streams="each")),
        (ValueError, "prng must be one of", dict(prng="mt")),
        (ValueError, "checkpoints must lie in", dict(checkpoints=[0, 11])),
        (TypeError, "balanced must be a bool", dict(balanced=1)),
    ]
    for exc, msg, kw in bad:
        with pytest.raises(exc, match=msg):
            sgd.OnlineSettings(**{**dict(lr=0.1, batch=4, steps=10), **kw})
        with pytest.raises(exc, match=msg):  # replacing a field validates again
            sgd.OnlineSettings.of(s, **kw)
    with pytest.raises(TypeError, match=r"unknown training settings \['learning_rate'\]"):
        sgd.OnlineSettings.of(None, learning_rate=0.1, batch=4, steps=10)
    with pytest.raises(TypeError, match="settings must be an OnlineSettings or None, got dict"):
        train.train_online(jax.random.key(0), gaussian_task(), np.ones(N), {"lr": 0.1})


@pytest.mark.slow
def test_settings_object_and_keywords_give_the_same_run():
    """train_online/train_sweep with an OnlineSettings, with its fields as keywords, or with a field
    replaced by a keyword: bit-identical trajectories."""
    key, w0 = jax.random.key(2), np.full((2, N), 0.1)
    fields = dict(lr=0.1, batch=8, steps=6, checkpoints=3, record_loss=True)
    s = sgd.OnlineSettings(**{**fields, "steps": 99})
    a = train.train_online(key, gaussian_task(), w0, **fields)
    b = train.train_online(key, gaussian_task(), w0, s, steps=6)
    np.testing.assert_array_equal(np.asarray(a.weights), np.asarray(b.weights))
    np.testing.assert_array_equal(np.asarray(a.loss), np.asarray(b.loss))
    np.testing.assert_array_equal(np.asarray(a.steps), [0, 3, 6])
    tasks = [LengthscaleTask(NLGP(XI[0], g), NLGP(XI[1], g)) for g in (3.0, 50.0)]
    c = train.train_sweep(key, tasks, w0, sgd.OnlineSettings(**fields))
    d = train.train_sweep(key, tasks, w0, **fields)
    np.testing.assert_array_equal(np.asarray(c.weights), np.asarray(d.weights))
    np.testing.assert_array_equal(np.asarray(c.loss), np.asarray(d.loss))
