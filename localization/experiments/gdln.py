r"""The GDLN chapter's back-end: gate flips along training runs and Monte Carlo GDLN moments.

How much the ReLU neuron's own gate changes during training (notes 001 §4.1, notes 003 §2.1):

The ReLU unit is a gated linear unit, :math:`\mathrm{ReLU}(\langle w, x\rangle) = g(x)\,\langle w,
x\rangle` with the gate :math:`g(t, x) = \mathbb 1(\langle w(t), x\rangle > 0)`. The gated deep
linear network (GDLN) model of the neuron (:mod:`localization.theory.gdln`) freezes the gate; this
module measures, on a recorded training run, how far that is from the truth:

* the agreement between consecutive checkpoints (notes 001 Eq. (45), notes 003 Eq. (3)),

  .. math:: p(t) = \mathbb P_x\bigl(g(t, x) = g(t + \delta t, x)\bigr),

* the fraction of inputs whose gate never changes over the whole run (notes 003 Eq. (4)),

  .. math:: p_\mathrm{unif} = \mathbb P_x\bigl(g(t, x) = g(t', x)\ \forall\, t, t'\bigr),

* the excess kurtosis of the preactivation :math:`\langle w(t), X\rangle` at every checkpoint
  (notes 001 Fig. 3, green curve),

all estimated on fresh inputs from the task (:func:`gate_flips`, with binomial standard errors); the
Gaussian closed forms that check the estimator are ``theory.gates.gaussian_agreement`` and
``theory.gates.gaussian_mixture_kurtosis``.

Freezing the gate at :math:`w` turns the neuron into a one-gate GDLN whose least-squares limit is
(:func:`frozen_gate_field`)

.. math:: w_\mathrm{OLS}(w) &= A^{-1} b(w),\qquad A = \tfrac14(\Sigma_0+\Sigma_1),\\
   b(w) &= \tfrac12\,\mathbb E_1\bigl[\mathbb 1(\langle w, X\rangle > 0)\,X\bigr]

(:math:`A` is exact for any half-space gate, ``gdln_moments.single_gate_second_moment``;
:math:`b` by Monte Carlo). The ReLU neuron's own flow is :math:`\dot w = 2\,(b(w) - A w)`, so its
fixed points are exactly the fields with :math:`w = w_\mathrm{OLS}(w)`: a converged neuron is the
OLS field of its own frozen gate.

A GDLN field with a fixed gate (e.g. the coordinate gate :math:`\mathbb 1(x_i>0)`, whose field peaks
at :math:`i`) predicts a shape, not where a learned field sits nor its sign (both are set by the
initialisation): :func:`aligned_distance` compares shapes after moving the learned field's peak onto
the reference's and matching signs.

The gate is :math:`\mathbb 1(h > 0)`, as in JAX's ReLU derivative (the notes write :math:`\ge`; the
two differ only on :math:`h = 0`, a null set for inputs with a density).

Sampled counterparts of :mod:`localization.theory.gdln_moments` and :mod:`localization.theory.gates`:
:func:`monte_carlo_moments` (the moments ``b`` and ``A`` of any gating, with standard errors, which check
the closed forms) and :func:`random_half_space_gates` (random gate normals, explicit key).
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.typing import ArrayLike

from localization import prng
from localization import validation as v
from localization.data.base import DataModel
from localization.data.task import LengthscaleTask, Task
from localization.field_analysis import peak_position
from localization.metrics import normalized_distance, sample_excess_kurtosis
from localization.pytree import pytree_dataclass, static_field
from localization.theory.gates import Gating, HalfSpaceGates
from localization.theory.gdln_moments import single_gate_second_moment
from localization.trajectory import Trajectory

__all__ = [
    "GateFlips",
    "gate_flips",
    "FrozenGateField",
    "frozen_gate_field",
    "aligned_distance",
    "MonteCarloMoments",
    "monte_carlo_moments",
    "random_half_space_gates",
]


def _finite(name: str, value: Any, ndim_min: int) -> np.ndarray:
    arr = np.asarray(v.float_array(name, value, ndim_min=ndim_min), dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got non-finite entries (shape {arr.shape})")
    return arr


# -------------------------------------------------------------------------------------------------
# Monte Carlo on a training run
# -------------------------------------------------------------------------------------------------
@pytree_dataclass(eq=False)
class GateFlips:
    r"""Gate-flip measures of a training run (:func:`gate_flips`), estimated on ``num`` fresh inputs.

    Shapes: ``...`` are the unit axes of the weights (e.g. (seeds,) for single neurons or
    (seeds, K) for a committee), C the number of checkpoints.

    Attributes
    ----------
    agreement : (..., C - 1) :math:`p(t_c)`, the fraction of inputs whose gate is the same at
        checkpoints c and c + 1 (notes 001 Eq. (45) with :math:`\delta t = t_{c+1} - t_c`).
    agreement_se : (..., C - 1) its standard error :math:`\sqrt{p(1-p)/(M-1)}` (M = ``num``).
    constant : (...) :math:`p_\mathrm{unif}`, the fraction of inputs whose gate is the same at every
        checkpoint (notes 003 Eq. (4), on the recorded checkpoints).
    constant_se : (...) its standard error.
    kurtosis : (..., C) plug-in excess kurtosis of the preactivation :math:`\langle w(t_c), X\rangle`.
    num : the number M of inputs.
    """

    agreement: jax.Array
    agreement_se: jax.Array
    constant: jax.Array
    constant_se: jax.Array
    kurtosis: jax.Array
    num: int = static_field()


def _binomial_se(p: jax.Array, num: int) -> jax.Array:
    return jnp.sqrt(p * (1.0 - p) / (num - 1))


@jax.jit
def _scan_checkpoints(x: jax.Array, w: jax.Array):
    """Map x (M, N), w (C, U, N) to agreement (C - 1, U), constant (U,), kurtosis (C, U)."""
    h0 = x @ w[0].T
    g0 = h0 > 0

    def step(carry, wc):
        g_prev, same = carry
        h = x @ wc.T
        g = h > 0
        agree = jnp.mean((g == g_prev).astype(x.dtype), axis=0)
        return (g, same & (g == g0)), (agree, sample_excess_kurtosis(h, axis=0))

    (_, same), (agree, kurt) = lax.scan(step, (g0, jnp.ones_like(g0)), w[1:])
    kurt = jnp.concatenate([sample_excess_kurtosis(h0, axis=0)[None], kurt], axis=0)
    return agree, jnp.mean(same.astype(x.dtype), axis=0), kurt


@partial(jax.jit, static_argnames=("num", "n", "dtype"))
def _sample_jit(key: Any, source: Any, num: int, n: int, dtype: Any) -> Any:
    return source.sample(key, num, n, dtype)


def _sample(key: Any, source: Any, num: int, n: int, dtype: Any) -> Any:
    """Draw ``source.sample(key, num, n, dtype)``, compiled once per pytree task or data model class.

    A pytree's family parameters are traced, so e.g. every NLGP gain shares one compilation.
    """
    if isinstance(source, (LengthscaleTask, DataModel)):
        return _sample_jit(key, source, num=num, n=n, dtype=np.dtype(dtype))
    return source.sample(key, num, n, dtype)


def _run_weights(run: Any, checkpoint_axis: int | None) -> tuple[np.ndarray, int]:
    if isinstance(run, Trajectory):
        if checkpoint_axis is not None:
            raise TypeError("checkpoint_axis is given by the Trajectory; pass it only with a weight array")
        w = run.weights
        if hasattr(w, "w") and not isinstance(w, (np.ndarray, jax.Array)):
            return w.w, -3  # committee / two-layer Params: (..., C, K, N)
        return w, -2
    return run, -2 if checkpoint_axis is None else checkpoint_axis


def gate_flips(
    key: jax.Array, task: Task, run: Trajectory | ArrayLike, *, num: int, checkpoint_axis: int | None = None
) -> GateFlips:
    r"""Measure gate agreement and the preactivation's excess kurtosis along a recorded ReLU training run.

    The agreement :math:`p(t)` between checkpoints, the fraction :math:`p_\mathrm{unif}` of inputs whose
    gate never changes, and the excess kurtosis of :math:`\langle w(t), X\rangle`, on ``num`` fresh
    inputs from ``task``.

    Every unit and checkpoint is evaluated on the same inputs (common random numbers), so
    differences between checkpoints are not sampling noise of the inputs. The units (seeds, hidden
    units) are evaluated together by one matrix product per checkpoint inside one ``lax.scan``.

    Parameters
    ----------
    key : JAX PRNG key for the inputs, ``task.sample(key, num, N)``.
    task : the task the run was trained on (anything with ``sample(key, num, n, dtype)``).
    run : a :class:`~localization.trajectory.Trajectory` of ``train.train_online`` (weights (..., C, N)
        for the neuron, ``Params`` with ``w`` (..., C, K, N) for a committee) or a real array of weights
        with the checkpoint axis at ``checkpoint_axis`` (default -2) and N last. At least 2 checkpoints;
        no weight vector may be zero.
    num : number M >= 2 of inputs.
    checkpoint_axis : only with an array ``run``: the axis of the checkpoints (not the last one).

    Returns
    -------
    :class:`GateFlips`; its unit axes ``...`` are the weight axes other than the checkpoint axis and N,
    in their order. Computed in the weights' dtype (float32 or float64).

    Raises
    ------
    TypeError for a task without ``sample`` or a non-array run; ValueError for fewer than 2
    checkpoints, non-finite weights, a zero weight vector (its preactivation is constant: gate and
    kurtosis undefined), a bad ``num`` or ``checkpoint_axis``.
    """
    key = v.key("key", key)
    if not isinstance(task, Task):
        raise TypeError(f"task must have a sample(key, num, n, dtype) method, got {type(task).__name__}")
    num = v.integer("num", num, 2)
    w, axis = _run_weights(run, checkpoint_axis)
    w = v.float_array("run weights", w, ndim_min=2)
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"checkpoint_axis must be an int, got {axis!r}")
    if not (-w.ndim <= axis <= -2 or 0 <= axis <= w.ndim - 2):
        raise ValueError(
            f"checkpoint_axis must lie in [-{w.ndim}, -2] or [0, {w.ndim - 2}] (any axis but the last, N) "
            f"for weights of shape {tuple(w.shape)}, got {axis}"
        )
    arr = np.moveaxis(np.asarray(w), axis, 0)
    if arr.shape[0] < 2:
        raise ValueError(f"the run needs at least 2 checkpoints, got {arr.shape[0]}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("run weights must be finite, got inf or NaN entries")
    if np.any(~np.any(arr != 0, axis=-1)):
        raise ValueError("run weights contain a zero vector: its gate and preactivation kurtosis are undefined")
    if not np.issubdtype(arr.dtype, np.floating):
        arr = arr.astype(np.float64)
    units = arr.shape[1:-1]
    n = arr.shape[-1]
    x, _ = _sample(key, task, num, n, arr.dtype)
    agree, const, kurt = _scan_checkpoints(jnp.asarray(x, arr.dtype), jnp.asarray(arr.reshape(arr.shape[0], -1, n)))
    agree = jnp.moveaxis(agree, 0, -1).reshape(units + (arr.shape[0] - 1,))
    kurt = jnp.moveaxis(kurt, 0, -1).reshape(units + (arr.shape[0],))
    const = const.reshape(units)
    if not bool(jnp.all(jnp.isfinite(kurt))):
        raise ValueError("a preactivation is constant on the sampled inputs: excess kurtosis undefined")
    return GateFlips(
        agreement=agree,
        agreement_se=_binomial_se(agree, num),
        constant=const,
        constant_se=_binomial_se(const, num),
        kurtosis=kurt,
        num=num,
    )


# -------------------------------------------------------------------------------------------------
# the OLS field of the neuron's own gate, frozen
# -------------------------------------------------------------------------------------------------
class FrozenGateField(NamedTuple):
    r"""The one-gate GDLN limit of :func:`frozen_gate_field` (float64 NumPy arrays, shape (..., N)).

    Attributes
    ----------
    field : :math:`w_\mathrm{OLS} = A^{-1} b`.
    drive : :math:`b = \tfrac12\mathbb E_1[\mathbb 1(\langle w, X\rangle>0)X]` (Monte Carlo).
    drive_se : entrywise standard error of ``drive``.
    field_se : entrywise standard error of ``field`` (propagated through :math:`A^{-1}`, with the
        sample covariance of the summands).
    num : the number of class-1 samples.
    """

    field: np.ndarray
    drive: np.ndarray
    drive_se: np.ndarray
    field_se: np.ndarray
    num: int


@jax.jit
def _drive_moments(x: jax.Array, w: jax.Array):
    """Map x (M, N), w (U, N) to the mean (U, N) and covariance (U, N, N) of the summands 1(<w,x> > 0) x / 2."""

    def one(wu):
        s = 0.5 * (x @ wu > 0).astype(x.dtype)[:, None] * x  # (M, N), one unit at a time (memory)
        mean = jnp.mean(s, axis=0)
        d = s - mean
        return mean, d.T @ d / (x.shape[0] - 1)

    return lax.map(one, w)


def frozen_gate_field(key: jax.Array, task: LengthscaleTask, weights: ArrayLike, *, num: int) -> FrozenGateField:
    r"""Estimate the OLS field of the one-gate GDLN whose gate :math:`\mathbb 1(\langle w, x\rangle > 0)` is frozen.

    (Module docstring.) :math:`w_\mathrm{OLS} = A^{-1}b(w)`, :math:`A=\tfrac14(\Sigma_0+\Sigma_1)` exact,
    :math:`b` by Monte Carlo.

    All weight vectors share the same ``num`` class-1 inputs ``task.model1.sample(key, num, N)``
    (float64).

    Parameters
    ----------
    key : JAX PRNG key.
    task : a :class:`~localization.data.LengthscaleTask` (balanced labels, :math:`Y=1` for ``model1``).
    weights : (..., N) real array, finite, no zero vector (e.g. a run's weights at several checkpoints).
    num : number M >= 2 of class-1 inputs.

    Returns
    -------
    :class:`FrozenGateField` with arrays of shape (..., N).

    Raises
    ------
    TypeError for a task that is not a ``LengthscaleTask`` or non-real weights; ValueError for
    non-finite weights, a zero vector, or ``num`` < 2.
    """
    key = v.key("key", key)
    if not isinstance(task, LengthscaleTask):
        raise TypeError(f"task must be a data.LengthscaleTask, got {type(task).__name__}")
    num = v.integer("num", num, 2)
    w = _finite("weights", weights, 1)
    if np.any(~np.any(w != 0, axis=-1)):
        raise ValueError("weights contain a zero vector: its gate is undefined")
    n = w.shape[-1]
    A = single_gate_second_moment(task, n)
    x = _sample(key, task.model1, num, n, np.float64)
    mean, cov = _drive_moments(jnp.asarray(x, jnp.float64), jnp.asarray(w.reshape(-1, n)))
    mean, cov = np.asarray(mean), np.asarray(cov) / num  # covariance of the mean
    Ainv = np.linalg.inv(A)
    field = mean @ Ainv  # A symmetric: (A^{-1} b)^T = b^T A^{-1}
    field_var = np.einsum("ij,ujk,ik->ui", Ainv, cov, Ainv)
    shape = w.shape
    return FrozenGateField(
        field=field.reshape(shape),
        drive=mean.reshape(shape),
        drive_se=np.sqrt(np.einsum("uii->ui", cov)).reshape(shape),
        field_se=np.sqrt(np.maximum(field_var, 0.0)).reshape(shape),
        num=num,
    )


def aligned_distance(w: ArrayLike, reference: ArrayLike) -> np.ndarray:
    r"""Return the shape distance between fields after aligning peak and sign.

    :math:`\lVert \hat u-\hat r\rVert_2` with :math:`\hat v=v/\lVert v\rVert_2`, where :math:`u` is
    ``w`` rotated on the ring so that its peak (:math:`\arg\max_i|w_i|`) sits at the peak of
    ``reference`` and multiplied by the sign that makes the two peak values agree in sign.

    0 for a translated (and possibly negated) copy of ``reference``; at most 2.

    Parameters
    ----------
    w : (..., N) real array, finite, no zero vector (e.g. learned fields of several seeds).
    reference : (N,) real array, finite, non-zero (e.g. an OLS field).

    Returns
    -------
    (...) float64 NumPy array.

    Raises
    ------
    TypeError for non-real input; ValueError for a wrong shape, non-finite entries or zero vectors.
    """
    w = _finite("w", w, 1)
    r = _finite("reference", reference, 1)
    if r.ndim != 1 or r.shape[0] != w.shape[-1]:
        raise ValueError(f"reference must be an (N,) field with N = {w.shape[-1]} (w's last axis), got shape {r.shape}")
    for name, arr in (("w", w), ("reference", r)):
        if np.any(~np.any(arr != 0, axis=-1)):
            raise ValueError(f"{name} must not contain a zero vector (a zero field has no peak or shape)")
    n = r.shape[0]
    target = int(peak_position(r))
    flat = w.reshape(-1, n)
    shift = (target - np.asarray(peak_position(flat))) % n
    rows = np.arange(n)[None, :]
    moved = flat[np.arange(flat.shape[0])[:, None], (rows - shift[:, None]) % n]
    moved = moved * (np.sign(moved[:, target]) * np.sign(r[target]))[:, None]
    return normalized_distance(moved.reshape(w.shape), r)


# -------------------------------------------------------------------------------------------------
# Monte Carlo moments of any gating, random gates
# -------------------------------------------------------------------------------------------------
class MonteCarloMoments(NamedTuple):
    """Monte Carlo GDLN moments with their standard errors (same shapes as ``b`` and ``A``).

    ``num`` samples were drawn from each class.
    """

    b: np.ndarray
    A: np.ndarray
    b_se: np.ndarray
    A_se: np.ndarray
    num: int


@jax.jit
def _batch_sums(gating, x):
    xt = (gating(x)[:, :, None] * x[:, None, :]).reshape(x.shape[0], -1)
    sq = xt * xt
    return jnp.sum(xt, 0), jnp.sum(sq, 0), xt.T @ xt, sq.T @ sq


def monte_carlo_moments(
    key: jax.Array, gating: Gating, task: LengthscaleTask, num: int, n: int, batch: int = 4096
) -> MonteCarloMoments:
    r"""Estimate the GDLN moments ``b`` and ``A`` of any gating by Monte Carlo, with standard errors.

    The moments are those of ``theory.gdln_moments`` (notes 001 Eqs. (49), (50), (53)). ``b_se`` and
    ``A_se`` are the standard errors of the stratified means (classes drawn separately, ``num`` each):
    :math:`\tfrac12 s_1/\sqrt{num}` and :math:`\tfrac12\sqrt{(s_0^2+s_1^2)/num}` entrywise, :math:`s_y`
    the sample standard deviation. Samples are drawn ``batch`` at a time (memory
    :math:`O(\text{batch}\cdot PN + (PN)^2)`).

    Parameters
    ----------
    key : JAX PRNG key (class y draws from ``fold_in(key, y)``).
    gating : a :class:`~localization.theory.gates.Gating` with ``num_dims == n``.
    task : a :class:`~localization.data.LengthscaleTask`.
    num : samples per class, >= 2.
    n : input size N, >= 2.
    batch : samples drawn at a time, >= 1.

    Returns
    -------
    :class:`MonteCarloMoments`: ``b`` (P N,), ``A`` (P N, P N), gate-major blocks, float64.
    """
    if not isinstance(gating, Gating):
        raise TypeError(f"gating must satisfy theory.gates.Gating (num_gates, num_dims, __call__), got {gating!r}")
    if not isinstance(task, LengthscaleTask):
        raise TypeError(f"task must be a data.LengthscaleTask, got {task!r}")
    key = v.key("key", key)
    num = v.integer("num", num, 2)
    n = v.integer("n", n, 2)
    batch = v.integer("batch", batch, 1)
    if gating.num_dims != n:
        raise ValueError(f"n must equal gating.num_dims = {gating.num_dims}, got {n}")
    stats = []
    for y, model in enumerate((task.model0, task.model1)):
        ky = jax.random.fold_in(key, y)
        sums = None
        done = 0
        for k in range(-(-num // batch)):
            m = min(batch, num - done)
            x = model.sample(jax.random.fold_in(ky, k), m, n)
            part = _batch_sums(gating, x)
            sums = part if sums is None else tuple(a + p for a, p in zip(sums, part, strict=True))
            done += m
        s1, s2, m2, m4 = (np.asarray(a, dtype=np.float64) for a in sums)
        mean, second = s1 / num, m2 / num
        var_x = np.maximum(s2 / num - mean**2, 0.0) * num / (num - 1)
        var_xx = np.maximum(m4 / num - second**2, 0.0) * num / (num - 1)
        stats.append((mean, second, var_x, var_xx))
    (_, a0, _, v0), (b1, a1, vb1, v1) = stats
    b = 0.5 * b1
    A = 0.5 * (a0 + a1)
    return MonteCarloMoments(b, 0.5 * (A + A.T), 0.5 * np.sqrt(vb1 / num), 0.5 * np.sqrt((v0 + v1) / num), num)


def random_half_space_gates(key: jax.Array, num_dims: int, num_gates: int) -> HalfSpaceGates:
    """``num_gates`` independent half-space gates with normals uniform on the unit sphere of R^``num_dims``.

    Parameters
    ----------
    key : JAX PRNG key of the normals.
    num_dims : input dimension N >= 1.
    num_gates : number of gates P >= 1.

    Returns
    -------
    :class:`~localization.theory.gates.HalfSpaceGates` with float64 unit normals (P, N).
    """
    key = v.key("key", key)
    n = v.integer("num_dims", num_dims, 1)
    p = v.integer("num_gates", num_gates, 1)
    z = prng.flat_normal(key, (p, n), jnp.float64)
    return HalfSpaceGates(z / jnp.linalg.norm(z, axis=1, keepdims=True))


# -------------------------------------------------------------------------------------------------
# The chapter's figures (drawing only: every number is computed by the chapter)
# -------------------------------------------------------------------------------------------------
