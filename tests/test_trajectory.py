"""Tests for localization.trajectory's one integration loop and localization.sgd's descent on it:
checkpoints against closed forms (powers of a linear map, sums of step indices, geometric decay of
gradient descent on a quadratic), the step-index and key conventions, and the one divergence check."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from localization import sgd
from localization.experiments import specialisation as sp
from localization.pytree import pytree_dataclass
from localization.theory import hypercube_flow as hf
from localization.theory import hypercube_laws as hl
from localization.trajectory import (
    DivergenceError,
    checkpoint_gaps,
    checkpoint_steps,
    checkpointed_scan,
    diverged,
    require_finite,
)

jax.config.update("jax_enable_x64", True)


def test_checkpoint_gaps_are_the_differences_from_step_zero():
    np.testing.assert_array_equal(checkpoint_gaps(np.array([0, 3, 3, 10])), [0, 3, 0, 7])
    assert checkpoint_gaps(checkpoint_steps(5, 40)).sum() == 40
    assert checkpoint_gaps(np.array([7])).dtype == np.int32


def test_linear_step_records_exact_matrix_powers():
    """x_{t+1} = A x_t: the record at checkpoint k is A^k x_0 (repeated and zero checkpoints included)."""
    rng = np.random.default_rng(0)
    a = np.eye(4) + 0.05 * rng.normal(size=(4, 4))
    x0 = rng.normal(size=4)
    ck = np.array([0, 1, 1, 7, 20])
    run = jax.jit(lambda x, gaps: checkpointed_scan(lambda s, _: jnp.asarray(a) @ s, x, gaps))
    got = np.asarray(run(jnp.asarray(x0), jnp.asarray(checkpoint_gaps(ck))))
    expect = np.stack([np.linalg.matrix_power(a, int(k)) @ x0 for k in ck])
    assert got.shape == (5, 4)
    np.testing.assert_allclose(got, expect, rtol=1e-12, atol=1e-14)
    # the gaps are traced: other checkpoint positions, same compiled loop, same closed form
    ck2 = np.array([2, 5, 6, 9, 9])
    got2 = np.asarray(run(jnp.asarray(x0), jnp.asarray(checkpoint_gaps(ck2))))
    np.testing.assert_allclose(got2, [np.linalg.matrix_power(a, int(k)) @ x0 for k in ck2], rtol=1e-12, atol=1e-14)


def test_step_index_counts_from_zero_and_record_sees_the_steps_done():
    """step(s, t) = s + t sums 0 + 1 + ... + (k - 1) = k(k - 1)/2 after k steps; record gets t = k."""
    ck = np.array([0, 4, 4, 9, 30])
    states, steps_done = checkpointed_scan(
        lambda s, t: s + t, jnp.zeros((), jnp.int32), jnp.asarray(checkpoint_gaps(ck)), lambda s, t: (s, t)
    )
    np.testing.assert_array_equal(np.asarray(steps_done), ck)
    np.testing.assert_array_equal(np.asarray(states), ck * (ck - 1) // 2)


def test_gradient_descent_on_a_quadratic_decays_geometrically_for_every_initialisation():
    """loss = Σ (p - y)²: p_k - y = (1 - 2 lr)^k (p_0 - y), each initialisation alone (vmapped)."""
    y = jnp.array([0.5, -1.0, 2.0])
    p0 = jnp.array([[1.0, 2.0, 3.0], [-4.0, 0.0, 0.25]])
    lr, ck = 0.1, np.array([0, 1, 6, 25])
    ws, ls = sgd.gradient_descent(
        p0, lambda p, x, y: jnp.sum((p - y) ** 2), lambda _: (None, y), lr, checkpoint_gaps(ck), record_loss=True
    )
    decay = (1 - 2 * lr) ** ck
    expect = y + decay[:, None, None] * (p0 - y)[None]
    np.testing.assert_allclose(np.asarray(ws), expect, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(ls), np.sum((expect - y) ** 2, axis=-1), rtol=1e-12, atol=1e-14)


def test_online_batches_draw_step_t_with_fold_in_key_t():
    """loss = p·y with y_t ~ N(0, 1) from fold_in(key, t): p_k = p_0 − lr Σ_{t<k} y_t, and the recorded
    loss at checkpoint k uses the batch step k would draw."""
    key = jax.random.key(3)
    sample = lambda k: (None, jax.random.normal(k, ()))  # noqa: E731
    ck = np.array([3, 10])
    ws, ls = sgd.gradient_descent(
        jnp.array([1.0]),
        lambda p, x, y: p * y,
        sgd.online_batches(key, sample),
        0.5,
        checkpoint_gaps(ck),
        record_loss=True,
    )
    ys = np.array([float(jax.random.normal(jax.random.fold_in(key, t), ())) for t in range(11)])
    np.testing.assert_allclose(np.asarray(ws)[:, 0], [1 - 0.5 * ys[:3].sum(), 1 - 0.5 * ys[:10].sum()], rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ls)[:, 0], np.asarray(ws)[:, 0] * ys[[3, 10]], rtol=1e-12)


def test_a_blowing_up_step_raises_the_one_divergence_error():
    """x ← 1e100 x overflows to inf by the fourth step: DivergenceError (a FloatingPointError and a
    ValueError) with the caller's message; finite records pass."""
    ws = checkpointed_scan(lambda s, _: 1e100 * s, jnp.ones(2), jnp.asarray(checkpoint_gaps(np.array([2, 5]))))
    assert np.all(np.isfinite(np.asarray(ws)[0])) and not np.all(np.isfinite(np.asarray(ws)[1]))
    with pytest.raises(DivergenceError, match="too large"):
        require_finite(ws, "step too large")
    assert issubclass(DivergenceError, FloatingPointError) and issubclass(DivergenceError, ValueError)
    require_finite((ws[0], {"b": jnp.zeros(3)}), "unused")
    with pytest.raises(DivergenceError, match="nan"):
        require_finite({"a": jnp.ones(2), "b": jnp.array([0.0, np.nan])}, "a nan")


def test_diverged_flags_each_run_over_every_leaf():
    """Runs on the leading axis: run 1 has a NaN in one leaf, run 2 an inf in the other, run 0 is finite."""
    w = np.ones((3, 4, 2))
    b = np.zeros((3, 4))
    w[1, 2, 0], b[2, 3] = np.nan, -np.inf
    np.testing.assert_array_equal(diverged({"w": w, "b": b}, axes=1), [False, True, True])
    assert diverged((w, b)).shape == () and bool(diverged((w, b))) and not diverged(np.ones(3))
    np.testing.assert_array_equal(diverged(w, axes=2), np.isnan(w).any(-1))
    with pytest.raises(ValueError, match="run axes"):
        diverged((w, np.zeros(2)), axes=1)
    with pytest.raises(ValueError, match="axes must be an integer >= 0"):
        diverged(w, axes=-1)


def test_every_loop_raises_divergence_error():
    """The hypercube Euler flow and the reduced model's SGD both end in the one check."""
    task = hf.HypercubeTask.of(hl.ising_ring_law(0.3, 6), hl.ising_ring_law(0.7, 6), 6)
    with pytest.raises(DivergenceError, match="the Euler iteration diverged: lr = 1e"):
        hf.integrate(np.ones(6), task, lr=1e300, steps=5)
    params = sp.ReducedParams(np.full((1, 1, 8), 1e30), np.full((1, 1), 1e30))
    with pytest.raises(FloatingPointError, match="reduced-model SGD diverged"):
        sp.train_reduced(jax.random.key(0), _InfTask(), params, lr=1e30, batch=4, steps=3)


@pytree_dataclass
class _InfTask:
    """A (leafless pytree) task whose inputs are infinite: any SGD on it leaves the finite numbers."""

    def sample(self, key, num, n, dtype):
        return jnp.full((num, n), jnp.inf, dtype), jnp.ones((num,), dtype)


def test_loop_arguments_are_checked():
    gaps = checkpoint_gaps(np.array([1, 2]))
    with pytest.raises(TypeError, match="step must be callable, got int"):
        checkpointed_scan(3, jnp.ones(2), gaps)
    with pytest.raises(TypeError, match="record must be callable, got str"):
        checkpointed_scan(lambda s, t: s, jnp.ones(2), gaps, "w")
    with pytest.raises(TypeError, match="gaps must be a 1-D integer array"):
        checkpointed_scan(lambda s, t: s, jnp.ones(2), np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="gaps must be a 1-D integer array"):
        checkpointed_scan(lambda s, t: s, jnp.ones(2), 3)
    with pytest.raises(TypeError, match="loss must be callable"):
        sgd.gradient_descent(jnp.ones((1, 2)), None, lambda t: (None, None), 0.1, gaps)
    with pytest.raises(TypeError, match="sample must be callable"):
        sgd.online_batches(jax.random.key(0), 1.0)
