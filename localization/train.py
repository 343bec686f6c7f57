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
* Steps run inside :func:`localization.trajectory.checkpointed_scan` (``lax.scan`` over the
  checkpoints, ``fori_loop`` between them) under one ``jit``, by
  :func:`localization.sgd.gradient_descent`, which the reduced model of
  :mod:`localization.experiments.specialisation` also uses; compiled functions are cached by JAX
  on (static configuration, shapes, dtypes, task structure), so repeated calls with the same shapes
  do not recompile (learning rate and checkpoint *positions* are traced values).
* Settings: :func:`train_online` and :func:`train_sweep` take one
  :class:`~localization.sgd.OnlineSettings` (or its fields as keywords), validated once when built.
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
from jax.typing import ArrayLike

from localization import initialisation
from localization import models as _models
from localization import validation as v
from localization.data.task import BalancedTask, Task
from localization.prng import splitmix_key
from localization.sgd import PRNGS, OnlineSettings, check_schedule, gradient_descent, online_batches
from localization.sharding import shard_leading, unpad
from localization.traced_task import rebuild_task, split_task, stack_tasks
from localization.trajectory import Trajectory, checkpoint_gaps, checkpoint_steps

__all__ = [
    "train_online",
    "train_sweep",
    "train_full_batch",
    "train_on_data",
]


# -------------------------------------------------------------------------------------------------
# argument handling
# -------------------------------------------------------------------------------------------------
def _check_task(task, balanced):
    if not isinstance(task, Task):
        raise TypeError(
            f"task must have a sample(key, num, n, dtype) method (e.g. data.LengthscaleTask), got {type(task).__name__}"
        )
    if balanced and not isinstance(task, BalancedTask):
        raise TypeError(
            "balanced=True needs a task with sample_balanced(key, num, n, dtype) (a data.LengthscaleTask), "
            f"got {type(task).__name__}"
        )


def _prepare_key(key, prng):
    key = v.key("key", key)
    if prng not in PRNGS:
        raise ValueError(f"prng must be one of {PRNGS}, got {prng!r}")
    if prng == "splitmix":
        return splitmix_key(key)
    if not jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        return jax.random.wrap_key_data(key)
    return key


def _n_arg(shape):
    return shape[0] if len(shape) == 1 else shape


def _input_size(n, N_w):
    """``n`` as ``task.sample`` takes it (int or grid tuple), checked against w0's last axis N_w."""
    if n is None:
        return N_w
    N = int(np.prod(n))
    if N != N_w:
        raise ValueError(f"n = {n!r} has prod(n) = {N}, but w0 has last axis {N_w}")
    return _n_arg(n)


def _sampler(task, n, batch, dtype, balanced):
    def sample(k):
        if balanced:
            x, y = task.sample_balanced(k, batch, n, dtype)
        else:
            x, y = task.sample(k, batch, n, dtype)
        return x.astype(dtype), y.astype(dtype)

    return sample


def _online_core(
    key, task, static_task, params, lr, gaps, *, batch, n, model, activation, dtype, record_loss, balanced, streams
):
    if streams == "per_init":
        # initialisation i alone on the stream fold_in(key, i): (I, C, 1, ...) -> (C, I, ...)
        inits = jax.tree_util.tree_leaves(params)[0].shape[0]
        keys = jax.vmap(jax.random.fold_in, in_axes=(None, 0))(key, jnp.arange(inits, dtype=jnp.uint32))
        kw = dict(batch=batch, n=n, model=model, activation=activation, dtype=dtype)
        kw.update(record_loss=record_loss, balanced=balanced, streams="shared")
        one = lambda k, p: _online_core(  # noqa: E731
            k, task, static_task, jax.tree_util.tree_map(lambda a: a[None], p), lr, gaps, **kw
        )
        ws, ls = jax.vmap(one)(keys, params)
        swap = lambda a: jnp.moveaxis(a[:, :, 0], 0, 1)  # noqa: E731
        return jax.tree_util.tree_map(swap, ws), None if ls is None else swap(ls)
    sample = _sampler(rebuild_task(task, static_task), n, batch, dtype, balanced)
    loss = partial(_models.batch_mse, model=model, activation=activation)
    return gradient_descent(params, loss, online_batches(key, sample), lr.astype(dtype), gaps, record_loss=record_loss)


_ONLINE_STATIC = ("static_task", "batch", "n", "model", "activation", "dtype", "record_loss", "balanced", "streams")
_run_online = jax.jit(_online_core, static_argnames=_ONLINE_STATIC)


@partial(jax.jit, static_argnames=_ONLINE_STATIC)
def _run_sweep(key, tasks, static_task, params, lr, gaps, **kw):
    core = lambda t: _online_core(key, t, static_task, params, lr, gaps, **kw)  # noqa: E731
    return jax.vmap(core)(tasks)


@partial(jax.jit, static_argnames=("model", "activation", "record_loss"))
def _run_gd(x, y, params, lr, gaps, *, model, activation, record_loss):
    loss = partial(_models.batch_mse, model=model, activation=activation)
    return gradient_descent(params, loss, lambda _: (x, y), lr.astype(x.dtype), gaps, record_loss=record_loss)


# -------------------------------------------------------------------------------------------------
# public API
# -------------------------------------------------------------------------------------------------
def _unflatten(tree, lead, extra=()):
    """(X, C, I, ...) with X = extra axes in front → (*extra, *lead, C, ...)."""

    def fix(a):
        ne = len(extra)
        if isinstance(a, jax.core.Tracer):  # traced (train_online called under jit): rearranged by jnp
            a = jnp.moveaxis(a, ne + 1, ne)  # (*extra, I, C, ...)
            return a.reshape(extra + lead + a.shape[ne + 1 :])
        a = np.moveaxis(np.asarray(a), ne + 1, ne)  # concrete results are rearranged on the host
        return jax.device_put(a.reshape(extra + lead + a.shape[ne + 1 :]))

    return jax.tree_util.tree_map(fix, tree)


def _trajectory(ck, lr, ws, ls, lead, extra=()):
    loss = None if ls is None else _unflatten(ls, lead, extra)
    times = jax.device_put(np.asarray(ck * lr, np.float64))
    return Trajectory(times=times, steps=jax.device_put(ck), weights=_unflatten(ws, lead, extra), loss=loss)


def _online(run, key, tasks, w0, s, extra=()):
    """Prepare (as both online entry points do), run ``run`` and return the Trajectory."""
    ck = checkpoint_steps(s.checkpoints, s.steps)
    params, lead, N_w = initialisation.flatten_initialisations(w0, s.model, s.dtype)
    n = _input_size(s.n, N_w)
    for task in tasks:
        _check_task(task, s.balanced)
    key = _prepare_key(key, s.prng)
    static = dict(n=n, model=s.model, activation=s.activation, dtype=s.dtype, record_loss=s.record_loss)
    static.update(batch=s.batch, balanced=s.balanced, streams=s.streams)
    if extra:  # a sweep: the tasks split over the devices (identity on one device)
        dyn, spec = split_task(stack_tasks(tasks, s.dtype))
        dyn, count = shard_leading(dyn)
    else:  # one task: the initialisations split over the devices
        (dyn, spec), (params, count) = split_task(tasks[0]), shard_leading(params)
    ws, ls = run(key, dyn, spec, params, np.asarray(s.lr), checkpoint_gaps(ck), **static)
    ws, ls = unpad((ws, ls), count, axis=0 if extra else 1)
    return _trajectory(ck, s.lr, ws, ls, lead, extra)


def train_online(
    key: jax.Array, task: Task, w0: ArrayLike | _models.Params, settings: OnlineSettings | None = None, **fields: Any
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
        initialisations, all trained on the same data stream (unless ``streams="per_init"``).
    settings : :class:`~localization.sgd.OnlineSettings`, or None to build them from ``fields``.
    **fields : the fields of :class:`~localization.sgd.OnlineSettings` (``lr``, ``batch``, ``steps``
        required without ``settings``; with ``settings``, values that replace its own).

    Returns
    -------
    localization.trajectory.Trajectory
        ``times = steps × lr`` (C,), ``steps`` (C,), ``weights`` (..., C, N) (or Params), ``loss``
        (..., C) or None.
    """
    return _online(_run_online, key, [task], w0, OnlineSettings.of(settings, **fields))


def train_sweep(
    key: jax.Array,
    tasks: Sequence[Task],
    w0: ArrayLike | _models.Params,
    settings: OnlineSettings | None = None,
    **fields: Any,
) -> Trajectory:
    """Run :func:`train_online` for every task in ``tasks`` at once, on common random numbers.

    A vmap over the tasks' parameters (see :func:`localization.traced_task.stack_tasks`), with the same initialisations
    ``w0`` and the same key for every task (e.g. the same latent Gaussians for every NLGP gain).
    With ``streams="per_init"`` initialisation ``i`` has its own stream, the same for every task.

    Parameters
    ----------
    key, w0, settings, **fields : as for :func:`train_online`.
    tasks : non-empty sequence of P tasks of one pytree structure.

    Returns
    -------
    localization.trajectory.Trajectory
        ``weights`` (P, ..., C, N) and ``loss`` (P, ..., C) (or None).
    """
    settings = OnlineSettings.of(settings, **fields)
    return _online(_run_sweep, key, list(tasks), w0, settings, extra=(len(tasks),))


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
    """Run full-batch gradient descent on a fixed data set.

    Parameters
    ----------
    x, y : (M, N) inputs and (M,) targets.
    w0 : initial parameters as for :func:`train_online` (leading axes = initialisations).
    lr, steps, checkpoints, model, activation, record_loss : as in
        :class:`~localization.sgd.OnlineSettings`.
    dtype : float32 or float64; default ``x``'s floating dtype.

    Returns
    -------
    localization.trajectory.Trajectory
        As for :func:`train_online`; ``loss`` is the full-data loss.
    """
    x = v.float_array("x", x, ndim_min=2)
    y = v.float_array("y", y, ndim_min=1)
    if x.ndim != 2 or y.ndim != 1 or x.shape[0] != y.shape[0]:
        raise ValueError(
            f"x must be (M, N) and y (M,) with the same M, got shapes {tuple(x.shape)} and {tuple(y.shape)}"
        )
    if dtype is None:
        dtype = x.dtype if jnp.issubdtype(x.dtype, jnp.floating) else jnp.float64
    dtype, lr, _, ck = check_schedule(model, activation, dtype, lr, steps, checkpoints, record_loss)
    params, lead, N_w = initialisation.flatten_initialisations(w0, model, dtype)
    if x.shape[1] != N_w:
        raise ValueError(f"x must have N = {N_w} columns (w0's last axis), got shape {tuple(x.shape)}")
    xy = (jnp.asarray(x, dtype), jnp.asarray(y, dtype))
    kw = dict(model=model, activation=activation, record_loss=record_loss)
    ws, ls = _run_gd(*xy, params, np.asarray(lr), checkpoint_gaps(ck), **kw)
    return _trajectory(ck, lr, ws, ls, lead)


def train_full_batch(
    key: jax.Array,
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
    """Run full-batch gradient descent on one data set of ``batch`` examples drawn once from ``task``.

    The data set is ``task.sample(key, batch, n, dtype)``; then as :func:`train_on_data`.

    Parameters
    ----------
    key, task, w0 : as for :func:`train_online`.
    lr, batch, steps, checkpoints, n, model, activation, dtype, record_loss, prng : as in
        :class:`~localization.sgd.OnlineSettings` (``prng`` default "key").

    Returns
    -------
    localization.trajectory.Trajectory
        As for :func:`train_on_data`.
    """
    _check_task(task, False)
    batch = v.integer("batch", batch, minimum=1)
    dtype = v.floating_dtype("dtype", dtype, allowed=("float32", "float64"))
    key = _prepare_key(key, prng)
    if n is None:
        if isinstance(w0, _models.Params):
            n_arg = int(jnp.shape(w0.w)[-1])
        else:
            n_arg = int(np.shape(v.float_array("w0", w0, ndim_min=1))[-1])
    else:
        n_arg = _n_arg(v.shape("n", n, minimum=1))
    x, y = task.sample(key, batch, n_arg, dtype)
    kw = dict(model=model, activation=activation, dtype=dtype, record_loss=record_loss)
    return train_on_data(x, y, w0, lr=lr, steps=steps, checkpoints=checkpoints, **kw)
