r"""Training: online SGD and full-batch gradient descent on the MSE loss (paper Section 2.1, Eq. (9)).

Conventions (book-wide; the book states them once, in the chapter *Localization in simulation*):

* Loss :math:`\mathcal L = \mathbb E[(y-\hat y)^2]` estimated by the batch mean — **no** factor ½
  (paper Eq. (9)).
* Plain (S)GD, :math:`w \leftarrow w - \eta\,\nabla\hat{\mathcal L}`; time :math:`t = \text{steps}\times\eta`,
  so (S)GD is forward Euler of the gradient flow :math:`\dot w = -\nabla\mathcal L` and trajectories
  with different learning rates are comparable on the same time axis (and with
  ``theory.integrate_effective``).
* Online SGD (:func:`train_online`): a fresh batch every step, drawn with the key
  ``jax.random.fold_in(key, t)`` at step ``t`` — the data stream depends only on ``key`` (not on the
  number of steps, the checkpoints or the initialisations), so a longer run extends a shorter one.
* Many initialisations at once: leading axes of ``w0`` are independent initialisations trained with
  ``vmap`` **on the same data stream** (each batch is sampled once per step and shared). Parameter
  sweeps (:func:`train_sweep`) vmap over the array-valued parameters of a stack of tasks with the
  same key: the underlying randomness is shared across parameter values (common random numbers), so
  the (parameter-independent) Gaussian draw is computed once per step for the whole sweep.
  ``streams="per_init"`` gives initialisation ``i`` its own stream, ``fold_in(fold_in(key, i), t)``
  at step ``t``, as the paper's code does (new data per seed), at one batch per initialisation per step.
* Steps run inside ``lax.scan``/``fori_loop`` under one ``jit``; compiled functions are cached by
  JAX on (static configuration, shapes, dtypes, task structure), so repeated calls with the same
  shapes do not recompile (learning rate and checkpoint *positions* are traced values).
* Several devices: the initialisations (:func:`train_online`) or the tasks (:func:`train_sweep`) are
  split over all JAX devices by :func:`localization.sharding.shard_leading` (identity on one device);
  the shared batch is then drawn once per step on every device.

Tasks: pytree tasks (``data.LengthscaleTask`` and the data models are pytrees whose family
parameters — gain, k, J, nu — are leaves and whose length scales are static) enter the compiled
function as traced arguments, so a new gain does not recompile; leaves with equal values are passed
once (the same tracer for both classes), which lets a sampler use one transform for both classes.

Random bits: by default (``prng="splitmix"``) the per-step keys are threefry keys as usual but
their random bits come from SplitMix64 (``localization.prng``), ~10× cheaper on CPU than
threefry's bits; ``prng="key"`` uses the implementation of the key passed in (e.g. threefry).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.typing import ArrayLike

from localization import models as _models
from localization import validation as v
from localization.data.task import BalancedTask, Task
from localization.models import mse  # the loss trained here (paper Eq. (9)), re-exported
from localization.prng import splitmix_key
from localization.sharding import shard_leading, unpad
from localization.traced_task import rebuild_task, split_task, stack_tasks
from localization.trajectory import Trajectory, checkpoint_steps

__all__ = [
    "Trajectory",
    "mse",
    "checkpoint_steps",
    "train_online",
    "train_sweep",
    "train_full_batch",
    "train_on_data",
    "stack_tasks",
]

PRNGS = ("splitmix", "key")
#: Data streams of the initialisations: one stream shared by all (default) or one per initialisation.
STREAMS = ("shared", "per_init")


# -------------------------------------------------------------------------------------------------
# argument handling
# -------------------------------------------------------------------------------------------------
def _float_dtype(dtype):
    return v.floating_dtype("dtype", dtype, allowed=("float32", "float64"))


def _unflatten(tree, lead, extra=()):
    """(X, I, ...) with X = extra axes in front → (*extra, *lead, C, ...) ; C is axis len(extra)."""

    def fix(a):
        # a: (*extra, C, I, ...) → (*extra, *lead, C, ...); concrete results are rearranged on the host
        ne = len(extra)
        if isinstance(a, jax.core.Tracer):
            a = jnp.moveaxis(a, ne + 1, ne)  # (*extra, I, C, ...)
            return a.reshape(extra + lead + a.shape[ne + 1 :])
        a = np.moveaxis(np.asarray(a), ne + 1, ne)
        return jax.device_put(a.reshape(extra + lead + a.shape[ne + 1 :]))

    return jax.tree_util.tree_map(fix, tree)


def _input_size(n, N_w):
    if n is None:
        return (N_w,), N_w
    shape = v.shape("n", n, minimum=1)
    N = int(np.prod(shape))
    if N != N_w:
        raise ValueError(f"n = {n!r} has prod(n) = {N}, but w0 has last axis {N_w}")
    return shape, N


def _n_arg(shape):
    return shape[0] if len(shape) == 1 else shape


def _check_task(task, balanced):
    if not isinstance(task, Task):
        raise TypeError(
            f"task must have a sample(key, num, n, dtype) method (e.g. data.LengthscaleTask), got {type(task).__name__}"
        )
    if not isinstance(balanced, bool):
        raise TypeError(f"balanced must be a bool, got {balanced!r}")
    if balanced and not isinstance(task, BalancedTask):
        raise TypeError(
            "balanced=True needs a task with sample_balanced(key, num, n, dtype) (a data.LengthscaleTask), "
            f"got {type(task).__name__}"
        )


def _check_streams(streams):
    if streams not in STREAMS:
        raise ValueError(f"streams must be one of {STREAMS}, got {streams!r}")
    return streams


def _prepare_key(key, prng):
    key = v.key("key", key)
    if prng not in PRNGS:
        raise ValueError(f"prng must be one of {PRNGS}, got {prng!r}")
    if prng == "splitmix":
        return splitmix_key(key)
    if not jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        return jax.random.wrap_key_data(key)
    return key


# -------------------------------------------------------------------------------------------------
# core (traced)
# -------------------------------------------------------------------------------------------------
def _sampler(task, n, batch, dtype, balanced):
    def sample(k):
        if balanced:
            x, y = task.sample_balanced(k, batch, n, dtype)
        else:
            x, y = task.sample(k, batch, n, dtype)
        return x.astype(dtype), y.astype(dtype)

    return sample


def _online_core(
    key,
    task,
    static_task,
    params,
    lr,
    gaps,
    *,
    batch,
    n,
    model,
    activation,
    dtype,
    record_loss,
    balanced,
    streams="shared",
):
    if streams == "per_init":
        # initialisation i alone on the stream fold_in(key, i): (I, C, 1, ...) -> (C, I, ...)
        inits = jax.tree_util.tree_leaves(params)[0].shape[0]
        keys = jax.vmap(jax.random.fold_in, in_axes=(None, 0))(key, jnp.arange(inits, dtype=jnp.uint32))
        kw = dict(
            batch=batch,
            n=n,
            model=model,
            activation=activation,
            dtype=dtype,
            record_loss=record_loss,
            balanced=balanced,
        )
        one = lambda k, p: _online_core(  # noqa: E731
            k, task, static_task, jax.tree_util.tree_map(lambda a: a[None], p), lr, gaps, **kw
        )
        ws, ls = jax.vmap(one)(keys, params)
        swap = lambda a: jnp.moveaxis(a[:, :, 0], 0, 1)  # noqa: E731
        return jax.tree_util.tree_map(swap, ws), None if ls is None else swap(ls)
    task = rebuild_task(task, static_task)
    lr = lr.astype(dtype)
    sample = _sampler(task, n, batch, dtype, balanced)
    loss_fn = partial(_models.batch_mse, model=model, activation=activation)
    grads = jax.vmap(jax.grad(loss_fn), in_axes=(0, None, None))
    losses = jax.vmap(loss_fn, in_axes=(0, None, None))

    def step(_, carry):
        p, t = carry
        x, y = sample(jax.random.fold_in(key, t))
        g = grads(p, x, y)
        p = jax.tree_util.tree_map(lambda a, b: a - lr * b, p, g)
        return p, t + 1

    def segment(carry, gap):
        carry = lax.fori_loop(0, gap, step, carry)
        p, t = carry
        if record_loss:
            x, y = sample(jax.random.fold_in(key, t))  # the batch step t draws
            return carry, (p, losses(p, x, y))
        return carry, (p, None)

    _, (ws, ls) = lax.scan(segment, (params, jnp.zeros((), jnp.int32)), gaps)
    return ws, ls


_ONLINE_STATIC = ("static_task", "batch", "n", "model", "activation", "dtype", "record_loss", "balanced", "streams")
_run_online = jax.jit(_online_core, static_argnames=_ONLINE_STATIC)


@partial(jax.jit, static_argnames=_ONLINE_STATIC)
def _run_sweep(key, tasks, static_task, params, lr, gaps, **kw):
    core = lambda t: _online_core(key, t, static_task, params, lr, gaps, **kw)  # noqa: E731
    return jax.vmap(core)(tasks)


def _gd_core(x, y, params, lr, gaps, *, model, activation, record_loss):
    lr = lr.astype(x.dtype)
    loss_fn = partial(_models.batch_mse, model=model, activation=activation)
    grads = jax.vmap(jax.grad(loss_fn), in_axes=(0, None, None))
    losses = jax.vmap(loss_fn, in_axes=(0, None, None))

    def step(_, p):
        g = grads(p, x, y)
        return jax.tree_util.tree_map(lambda a, b: a - lr * b, p, g)

    def segment(p, gap):
        p = lax.fori_loop(0, gap, step, p)
        return p, (p, losses(p, x, y) if record_loss else None)

    _, (ws, ls) = lax.scan(segment, params, gaps)
    return ws, ls


_run_gd = jax.jit(_gd_core, static_argnames=("model", "activation", "record_loss"))


# -------------------------------------------------------------------------------------------------
# public API
# -------------------------------------------------------------------------------------------------
def _common(w0, n, lr, steps, checkpoints, model, activation, dtype, record_loss):
    _models.check_architecture(model, activation)
    dtype = _float_dtype(dtype)
    lr = v.positive("lr", lr)
    steps = v.integer("steps", steps, minimum=0)
    if not isinstance(record_loss, bool):
        raise TypeError(f"record_loss must be a bool, got {record_loss!r}")
    ck = checkpoint_steps(checkpoints, steps)
    params, lead, N_w = _models.flatten_initialisations(w0, model, dtype)
    shape, _ = _input_size(n, N_w)
    gaps = np.diff(np.concatenate([[0], ck])).astype(np.int32)
    return dtype, lr, ck, params, lead, shape, gaps


def _trajectory(ck, lr, ws, ls, lead, extra=()):
    weights = _unflatten(ws, lead, extra)
    loss = None
    if ls is not None:
        loss = _unflatten(ls, lead, extra)
    return Trajectory(
        times=jax.device_put(np.asarray(ck * lr, np.float64)), steps=jax.device_put(ck), weights=weights, loss=loss
    )


def train_online(
    key: Any,
    task: Task,
    w0: ArrayLike | _models.Params,
    *,
    lr: float,
    batch: int,
    steps: int,
    checkpoints: int | Sequence[int] | np.ndarray = 101,
    n: int | tuple[int, ...] | None = None,
    model: str = "neuron",
    activation: str = "relu",
    dtype: Any = jnp.float32,
    record_loss: bool = False,
    balanced: bool = False,
    prng: str = "splitmix",
    streams: str = "shared",
) -> Trajectory:
    r"""Online SGD on the MSE (paper Eq. (9)) with a fresh batch from ``task`` at every step.

    Update :math:`w_{t+1} = w_t - \eta\,\nabla_w \frac1B\sum_{b}(y_b-\hat y(x_b; w_t))^2` with the
    batch of step ``t`` drawn by ``task.sample(fold_in(key, t), batch, n, dtype)``.

    Parameters
    ----------
    key : JAX PRNG key (``jax.random.key(seed)``); the only source of randomness.
    task : object with ``sample(key, num, n, dtype) -> (x (num, N), y (num,))``, e.g.
        ``data.LengthscaleTask``. Pytree tasks (numeric leaves) are traced, others are static.
    w0 : initial parameters. ``model="neuron"``: (..., N) array. ``"committee"``: (..., K, N) array or
        ``Params(w, b)``. ``"two_layer"``: ``Params(w, a, b, c)``. Leading axes ``...`` are independent
        initialisations, all trained on the same data stream.
    lr : learning rate η > 0.
    batch : examples per step (≥ 1).
    steps : number of SGD steps (≥ 0).
    checkpoints : int C (C evenly spaced step indices in [0, steps]) or a non-decreasing sequence of
        step indices; the weights after that many steps are recorded. Default 101.
    n : input size (int or grid tuple) passed to ``task.sample``; default ``w0``'s last axis.
    model, activation : see :mod:`localization.models` ("neuron" needs "relu").
    dtype : jnp.float32 (default, fast) or jnp.float64.
    record_loss : also record the batch loss at each checkpoint (costs one extra batch per checkpoint).
    balanced : draw exactly ⌊B/2⌋ examples of class 0 and the rest of class 1 (from
        ``task.model0``/``task.model1``) instead of i.i.d. Bernoulli(½) labels: same expected gradient,
        slightly less noise.
    prng : "splitmix" (default; threefry keys, SplitMix64 bits, see module docstring) or "key" (bits
        from ``key``'s own implementation).
    streams : "shared" (default: every initialisation trains on the one stream of ``key``) or
        "per_init" (initialisation ``i`` on its own stream, that of ``fold_in(key, i)``, as separate
        runs with their own data seeds; one batch per initialisation and step).

    Returns
    -------
    Trajectory with ``times = steps × lr`` (C,), ``steps`` (C,), ``weights`` (..., C, N) (or Params),
    ``loss`` (..., C) or None.
    """
    dtype, lr, ck, params, lead, shape, gaps = _common(
        w0, n, lr, steps, checkpoints, model, activation, dtype, record_loss
    )
    batch = v.integer("batch", batch, minimum=2 if balanced else 1)
    _check_task(task, balanced)
    streams = _check_streams(streams)
    key = _prepare_key(key, prng)
    dyn, static = split_task(task)
    params, inits = shard_leading(params)  # initialisations split over the devices (identity on one)
    ws, ls = _run_online(
        key,
        dyn,
        static,
        params,
        np.asarray(lr),
        gaps,
        batch=batch,
        n=_n_arg(shape),
        model=model,
        activation=activation,
        dtype=dtype,
        record_loss=record_loss,
        balanced=balanced,
        streams=streams,
    )
    ws, ls = unpad((ws, ls), inits, axis=1)
    return _trajectory(ck, lr, ws, ls, lead)


def train_sweep(
    key: Any,
    tasks: Sequence[Any],
    w0: ArrayLike | _models.Params,
    *,
    lr: float,
    batch: int,
    steps: int,
    checkpoints: int | Sequence[int] | np.ndarray = 101,
    n: int | tuple[int, ...] | None = None,
    model: str = "neuron",
    activation: str = "relu",
    dtype: Any = jnp.float32,
    record_loss: bool = False,
    balanced: bool = False,
    prng: str = "splitmix",
    streams: str = "shared",
) -> Trajectory:
    """Online SGD (as :func:`train_online`) for every task in ``tasks`` at once (vmap over the tasks'
    parameters, see :func:`stack_tasks`), with the same initialisations ``w0`` and the same key for
    every task (common random numbers: e.g. the same latent Gaussians for every NLGP gain). With
    ``streams="per_init"`` initialisation ``i`` has its own stream, the same for every task.

    Returns
    -------
    Trajectory with ``weights`` (P, ..., C, N) and ``loss`` (P, ..., C) (or None), P = len(tasks).
    """
    dtype, lr, ck, params, lead, shape, gaps = _common(
        w0, n, lr, steps, checkpoints, model, activation, dtype, record_loss
    )
    batch = v.integer("batch", batch, minimum=2 if balanced else 1)
    stacked = stack_tasks(tasks, dtype)
    for t in tasks:
        _check_task(t, balanced)
    streams = _check_streams(streams)
    key = _prepare_key(key, prng)
    dyn, spec = split_task(stacked)
    dyn, P = shard_leading(dyn)  # tasks split over the devices (identity on one device)
    ws, ls = _run_sweep(
        key,
        dyn,
        spec,
        params,
        np.asarray(lr),
        gaps,
        batch=batch,
        n=_n_arg(shape),
        model=model,
        activation=activation,
        dtype=dtype,
        record_loss=record_loss,
        balanced=balanced,
        streams=streams,
    )
    ws, ls = unpad((ws, ls), P)
    return _trajectory(ck, lr, ws, ls, lead, extra=(len(tasks),))


def train_on_data(
    x: ArrayLike,
    y: ArrayLike,
    w0: ArrayLike | _models.Params,
    *,
    lr: float,
    steps: int,
    checkpoints: int | Sequence[int] | np.ndarray = 101,
    model: str = "neuron",
    activation: str = "relu",
    dtype: Any = None,
    record_loss: bool = False,
) -> Trajectory:
    """Full-batch gradient descent on a fixed data set ``x`` (M, N), ``y`` (M,), from ``w0`` (leading
    axes = initialisations). ``dtype`` defaults to ``x``'s floating dtype. Returns a Trajectory."""
    x = v.float_array("x", x, ndim_min=2)
    y = v.float_array("y", y, ndim_min=1)
    if x.ndim != 2 or y.ndim != 1 or x.shape[0] != y.shape[0]:
        raise ValueError(
            f"x must be (M, N) and y (M,) with the same M, got shapes {tuple(x.shape)} and {tuple(y.shape)}"
        )
    if dtype is None:
        dtype = x.dtype if jnp.issubdtype(x.dtype, jnp.floating) else jnp.float64
    dtype, lr, ck, params, lead, shape, gaps = _common(
        w0, None, lr, steps, checkpoints, model, activation, dtype, record_loss
    )
    if x.shape[1] != shape[0]:
        raise ValueError(f"x must have N = {shape[0]} columns (w0's last axis), got shape {tuple(x.shape)}")
    ws, ls = _run_gd(
        jnp.asarray(x, dtype),
        jnp.asarray(y, dtype),
        params,
        np.asarray(lr),
        gaps,
        model=model,
        activation=activation,
        record_loss=record_loss,
    )
    return _trajectory(ck, lr, ws, ls, lead)


def train_full_batch(
    key: Any,
    task: Task,
    w0: ArrayLike | _models.Params,
    *,
    lr: float,
    batch: int,
    steps: int,
    checkpoints: int | Sequence[int] | np.ndarray = 101,
    n: int | tuple[int, ...] | None = None,
    model: str = "neuron",
    activation: str = "relu",
    dtype: Any = jnp.float32,
    record_loss: bool = False,
    prng: str = "key",
) -> Trajectory:
    """Full-batch gradient descent on one data set of ``batch`` examples drawn once from ``task`` with
    ``key`` (``task.sample(key, batch, n, dtype)``); otherwise as :func:`train_online`."""
    _check_task(task, False)
    batch = v.integer("batch", batch, minimum=1)
    dtype = _float_dtype(dtype)
    key = _prepare_key(key, prng)
    if n is None:
        if isinstance(w0, _models.Params):
            N = int(jnp.shape(w0.w)[-1])
        else:
            N = int(np.shape(v.float_array("w0", w0, ndim_min=1))[-1])
        n_arg = N
    else:
        n_arg = _n_arg(v.shape("n", n, minimum=1))
    x, y = task.sample(key, batch, n_arg, dtype)
    return train_on_data(
        x,
        y,
        w0,
        lr=lr,
        steps=steps,
        checkpoints=checkpoints,
        model=model,
        activation=activation,
        dtype=dtype,
        record_loss=record_loss,
    )
