r"""The effective-dynamics chapter's back-end: the effective flow (paper Eq. (5)) against SGD (§4.2, Figs. 3, 8).

The chapter *Effective dynamics vs simulation* asks three questions of the early-time flow
:math:`\dot w=\tfrac12[\varphi(\Sigma_1w/\sqrt{w^\top\Sigma_1w})-(\Sigma_0+\Sigma_1)w]`:
does it follow SGD from the same initialisation, when does it stop following it (as A3 fails),
and does it put the receptive-field peak where SGD puts it. This module runs the experiments that
answer them:

* :func:`compare_flow_and_sgd` — SGD (``localization.train.train_online``) and the flow with exact
  and with cubic-Taylor φ (``theory.integrate_effective``) from the same initialisations, on the same
  time grid ``times = steps × lr``;
* :func:`flow_sweep` — the flow for every task of a parameter sweep (the counterpart of
  ``train.train_sweep``);
* :func:`comparison_sweep` — :func:`compare_flow_and_sgd` for every task of a sweep at once (one
  vmapped SGD run, one compiled flow);
* :func:`monte_carlo_drift` — the expected SGD drift at one weight vector by Monte Carlo, to check
  the flow's vector field; :func:`drift_test` — that check: F(w) of Eq. (eff-flow) and its two
  factor-2 variants against the Monte Carlo drift, and the relative noise of one batch gradient;
* :func:`fig3a_amplifier` — the φ with which Eq. (5) reproduces the Euler step of the paper's public
  code for Fig. 3's Taylor flow (``figures/fig3a.py``), to integrate that flow as the paper did.

The measurements on the results (shape distance, peak agreement, crossing times) are in
``localization.metrics``; the tabulated φ in ``localization.theory.tabulated``.

Time convention: :math:`t=\text{steps}\times\text{lr}` throughout (see ``theory.effective``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike, DTypeLike

from localization import data, models, theory, train
from localization import validation as v
from localization.data.task import Task
from localization.prng import splitmix_key
from localization.trajectory import Trajectory

__all__ = [
    "Comparison",
    "compare_flow_and_sgd",
    "flow_sweep",
    "comparison_sweep",
    "MonteCarloDrift",
    "monte_carlo_drift",
    "DriftTest",
    "drift_test",
    "fig3a_amplifier",
]


# -------------------------------------------------------------------------------------------------
# the experiment: SGD and the effective flow from the same initialisations
# -------------------------------------------------------------------------------------------------
class Comparison(NamedTuple):
    """SGD and effective-flow trajectories from the same initialisations, on the same checkpoints.

    ``sgd``, ``flow`` (exact φ) and ``taylor`` (cubic-Taylor φ, or None) are ``localization.trajectory``
    ``Trajectory`` objects with identical ``times`` (C,) and ``steps`` (C,) and weights (..., C, n); the
    SGD weights are in the simulation dtype, the flows in float64. ``cov0``, ``cov1`` are the exact class
    covariances (n, n) used by the flows.
    """

    sgd: Trajectory
    flow: Trajectory | None
    taylor: Trajectory | None
    cov0: np.ndarray
    cov1: np.ndarray

    def select(self, index: int) -> Comparison:
        """Return the comparison for one task of a :func:`comparison_sweep` (index of the leading axis)."""
        flow, taylor = (None if t is None else t.select(index) for t in (self.flow, self.taylor))
        return Comparison(self.sgd.select(index), flow, taylor, self.cov0[index], self.cov1[index])


def _flows(w0, task, n, *, lr, steps, checkpoints, taylor, exact=True, table=4097):
    cov0, cov1 = (np.asarray(s, dtype=np.float64) for s in task.covariances(n))
    marginal = task.model1.marginal
    flow = tay = None
    if exact:
        phi = theory.amplifier_of(marginal)
        if table is not None:
            phi = theory.tabulate_amplifier(phi, table)
        flow = theory.integrate_effective(w0, phi, cov0, cov1, lr=lr, steps=steps, checkpoints=checkpoints)
    if taylor:
        tay = theory.integrate_effective(
            w0, theory.amplifier_taylor(marginal), cov0, cov1, lr=lr, steps=steps, checkpoints=checkpoints
        )
    return flow, tay, cov0, cov1


def _check_w0(w0, n):
    """(w0 as float64 (..., n), n): n defaults to w0's last axis and must match it."""
    w0 = np.asarray(v.float_array("w0", w0), dtype=np.float64)
    n = v.integer("n", int(w0.shape[-1]) if n is None else n, minimum=2)
    if w0.shape[-1] != n:
        raise ValueError(f"w0 must have last axis of length n = {n}, got shape {w0.shape}")
    return w0, n


def compare_flow_and_sgd(
    key: jax.Array,
    task: Any,
    w0: ArrayLike,
    *,
    lr: float,
    batch: int,
    steps: int,
    checkpoints: int | Sequence[int] = 101,
    n: int | None = None,
    taylor: bool = True,
    dtype: DTypeLike | None = None,
    balanced: bool = False,
    table: int | None = 4097,
) -> Comparison:
    r"""Online SGD and the effective flow (paper Eq. (5)) from the same initial weights.

    SGD is ``train.train_online(key, task, w0, ...)`` (all initialisations — the leading axes of
    ``w0`` — on one shared data stream); the flow is ``theory.integrate_effective`` with φ =
    ``theory.amplifier_of(task.model1.marginal)`` (paper Eq. (6)) and, if ``taylor``, with the cubic
    Taylor φ (``theory.amplifier_taylor``), forward Euler with step ``lr`` (one flow step per SGD
    step), Σ₀, Σ₁ = ``task.covariances(n)`` (exact). All three share ``times = steps × lr``.

    Parameters
    ----------
    key : JAX PRNG key for the SGD data stream.
    task : a ``data.LengthscaleTask`` (needs ``sample``, ``covariances(n)`` and ``model1.marginal``).
    w0 : (..., n) initial weights (float64 recommended; SGD casts them to ``dtype``).
    lr, batch, steps, checkpoints, balanced : as in ``train.train_online``.
    n : int input size (default: ``w0``'s last axis).
    taylor : also integrate the cubic-Taylor flow (needs a finite fourth moment of the marginal).
    dtype : SGD dtype (default jnp.float32); the flows are always float64.
    table : the exact φ is evaluated from a ``theory.TabulatedAmplifier`` with this many points
        (default 4097, interpolation error < 1e-6); ``None`` evaluates the quadrature directly.

    Returns
    -------
    :class:`Comparison`.
    """
    w0, n = _check_w0(w0, n)
    if not isinstance(taylor, bool):
        raise TypeError(f"taylor must be a bool, got {taylor!r}")
    if not isinstance(task, data.LengthscaleTask):
        raise TypeError(f"task must be a data.LengthscaleTask, got {type(task).__name__}")
    dtype = jnp.float32 if dtype is None else dtype
    sgd = train.train_online(
        key, task, w0, lr=lr, batch=batch, steps=steps, checkpoints=checkpoints, n=n, dtype=dtype, balanced=balanced
    )
    table = _check_table(table)
    flow, tay, s0, s1 = _flows(w0, task, n, lr=lr, steps=steps, checkpoints=checkpoints, taylor=taylor, table=table)
    return Comparison(sgd, flow, tay, s0, s1)


def _check_table(table):
    if table is None:
        return None
    table = v.integer("table", table, minimum=3)
    if table % 2 == 0:
        raise ValueError(f"table must be odd (so that a = 0 is a grid point), got {table}")
    return table


def flow_sweep(
    tasks: Sequence[Any],
    w0: ArrayLike,
    *,
    lr: float,
    steps: int,
    checkpoints: int | Sequence[int] = 101,
    n: int | None = None,
    taylor: bool = False,
    table: int | None = 4097,
) -> Trajectory:
    r"""Return the effective flow (exact φ) for each task of a parameter sweep, from the same ``w0``.

    The counterpart of ``train.train_sweep`` for the theory: for each task (e.g. NLGP at a grid of
    gains) φ and Σ₀, Σ₁ change, the initialisation does not. The compiled integrator is reused
    across tasks (same shapes). Returns a ``Trajectory`` with weights (P, ..., C, n), P =
    ``len(tasks)``; ``taylor=True`` uses the cubic-Taylor φ instead. ``table`` as in
    :func:`compare_flow_and_sgd`.

    Parameters
    ----------
    tasks : Sequence
        The P tasks of the sweep (e.g. ``data.LengthscaleTask`` at a grid of gains).
    w0 : ArrayLike
        (..., n) initial weights, shared by every task.
    lr : float
        Step size (the SGD learning rate).
    steps : int
        Number of steps.
    checkpoints : int or Sequence[int]
        As in ``localization.train``.
    n : int or None
        Input size (default: the last axis of ``w0``).
    taylor : bool
        Use the cubic-Taylor φ.
    table : int or None
        As in :func:`compare_flow_and_sgd`.

    Returns
    -------
    Trajectory
        Weights (P, ..., C, n).
    """
    tasks = data.lengthscale_tasks("tasks", tasks)
    if not isinstance(taylor, bool):
        raise TypeError(f"taylor must be a bool, got {taylor!r}")
    w0, n = _check_w0(w0, n)
    return _swept_flows(tasks, w0, n, lr, steps, checkpoints, taylor, _check_table(table))[0]


def _swept_flows(tasks, w0, n, lr, steps, checkpoints, taylor, table):
    """Return the flows of checked tasks stacked as one Trajectory (P, ..., C, n), and Σ₀, Σ₁ (P, n, n)."""
    runs, cov0, cov1 = [], [], []
    for task in tasks:
        flow, tay, s0, s1 = _flows(
            w0, task, n, lr=lr, steps=steps, checkpoints=checkpoints, taylor=taylor, exact=not taylor, table=table
        )
        runs.append(tay if taylor else flow)
        cov0.append(s0)
        cov1.append(s1)
    weights = jnp.stack([r.weights for r in runs])
    trajectory = Trajectory(times=runs[0].times, steps=runs[0].steps, weights=weights, loss=None)
    return trajectory, np.stack(cov0), np.stack(cov1)


def comparison_sweep(
    key: jax.Array,
    tasks: Sequence[Any],
    w0: ArrayLike,
    *,
    lr: float,
    batch: int,
    steps: int,
    checkpoints: int | Sequence[int] = 101,
    n: int | None = None,
    dtype: DTypeLike | None = None,
    balanced: bool = False,
    table: int | None = 4097,
) -> Comparison:
    """Run :func:`compare_flow_and_sgd` (exact φ, no Taylor flow) for every task of a parameter sweep.

    SGD is one ``train.train_sweep`` call (vmap over the tasks, the same initialisations and data
    stream for every task); the flows are :func:`flow_sweep`. Costs one compilation of each, instead
    of one SGD run per task. Returns a :class:`Comparison` whose ``sgd`` and ``flow`` weights are
    (P, ..., C, n), ``taylor`` None, and ``cov0``, ``cov1`` (P, n, n), P = ``len(tasks)``.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key (initialisations are ``w0``; the key drives the data stream).
    tasks : Sequence
        The P tasks of the sweep.
    w0 : ArrayLike
        (..., n) initial weights, shared by every task.
    lr, batch, steps : float, int, int
        SGD learning rate, batch size and number of steps.
    checkpoints : int or Sequence[int]
        As in ``localization.train``.
    n : int or None
        Input size (default: the last axis of ``w0``).
    dtype : DTypeLike or None
        SGD's dtype (``None``: ``train``'s default).
    balanced : bool
        Draw balanced batches.
    table : int or None
        As in :func:`compare_flow_and_sgd`.

    Returns
    -------
    Comparison
        ``sgd`` and ``flow`` (P, ..., C, n), ``cov0``, ``cov1`` (P, n, n).
    """
    tasks = data.lengthscale_tasks("tasks", tasks)
    w0, n = _check_w0(w0, n)
    flow, cov0, cov1 = _swept_flows(tasks, w0, n, lr, steps, checkpoints, False, _check_table(table))
    sgd = train.train_sweep(
        key,
        tasks,
        w0,
        lr=lr,
        batch=batch,
        steps=steps,
        checkpoints=checkpoints,
        n=n,
        dtype=jnp.float32 if dtype is None else dtype,
        balanced=balanced,
    )
    return Comparison(sgd, flow, None, cov0, cov1)


# -------------------------------------------------------------------------------------------------
# the SGD drift by Monte Carlo (to check the vector field)
# -------------------------------------------------------------------------------------------------
class MonteCarloDrift(NamedTuple):
    r"""Monte Carlo estimate of the expected SGD drift :math:`-\nabla\mathcal L(w)` with its standard error."""

    mean: np.ndarray  # (n,) float64
    stderr: np.ndarray  # (n,) float64, standard error of each entry (from the spread over chunks)
    num: int  # total number of examples used


def monte_carlo_drift(
    key: jax.Array, task: Task, w: ArrayLike, *, num: int, chunks: int = 16, n: int | None = None
) -> MonteCarloDrift:
    r"""Estimate :math:`-\nabla\mathcal L(w)` — the drift of SGD per unit time — from ``num`` examples.

    The examples are drawn from ``task`` in ``chunks`` independent batches of ``num // chunks``
    (keys ``fold_in(key, c)``, float64, SplitMix64 random bits as in ``train_online``'s default); on
    each batch the gradient of the batch loss (as ``models.mse``: paper Eq. (9), no ½) is taken by
    autodiff — exactly the gradient an SGD step with that batch uses — and the chunk gradients are
    averaged. The standard error of each entry is
    the spread over chunks divided by :math:`\sqrt{\text{chunks}}`.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    task : Task
        The task to sample.
    w : ArrayLike
        (n,) weights.
    num : int
        Number of examples, >= 2 ``chunks``.
    chunks : int
        Number of independent batches, >= 2.
    n : int or None
        Input size (default: the length of ``w``).

    Returns
    -------
    MonteCarloDrift
        ``mean`` and ``stderr`` (n,) float64 and the number of examples used.
    """
    key = v.key("key", key)
    num = v.integer("num", num, minimum=4)
    chunks = v.integer("chunks", chunks, minimum=2)
    if num < 2 * chunks:
        raise ValueError(f"num must be at least 2 * chunks = {2 * chunks}, got {num}")
    w = np.asarray(v.float_array("w", w), dtype=np.float64)
    if w.ndim != 1:
        raise ValueError(f"w must be a single weight vector of shape (n,), got shape {w.shape}")
    if n is None:
        n = int(w.shape[0])
    n = v.integer("n", n, minimum=2)
    if w.shape[0] != n:
        raise ValueError(f"w must have length n = {n}, got shape {w.shape}")
    if not isinstance(task, Task):
        raise TypeError(f"task must be a data.Task (with a sample method), got {type(task).__name__}")
    m = num // chunks
    key = splitmix_key(key)  # the same fast bit generator as train_online's default (prng="splitmix")
    g = np.asarray(_drift_chunks(key, task, jnp.asarray(w), m=m, chunks=chunks, n=n))
    return MonteCarloDrift(g.mean(0), g.std(0, ddof=1) / math.sqrt(chunks), m * chunks)


def _drift_chunks(key, task, w, *, m, chunks, n):
    """(chunks, n) negative batch gradients of the MSE, one per independent batch of m examples.

    The task is closed over (compiled once per call; the chapter calls this once per task). The loss
    is ``models.batch_mse`` of the single ReLU neuron (paper M2, Eq. (9): mean squared error, no ½),
    the loss ``train`` differentiates.
    """
    loss = functools.partial(models.batch_mse, model="neuron", activation="relu")

    @jax.jit
    def run(k, u):
        def one(c):
            x, y = task.sample(jax.random.fold_in(k, c), m, n, jnp.float64)
            x = jnp.asarray(x, jnp.float64)
            y = jnp.asarray(y, jnp.float64)
            return -jax.grad(loss)(u, x, y)

        return jax.lax.map(one, jnp.arange(chunks))

    return run(key, w)


class DriftTest(NamedTuple):
    """The effective field against the Monte Carlo SGD drift at one weight vector (:func:`drift_test`).

    Attributes
    ----------
    ratio : dict of str to dict of str to float
        Task name → ``||MC mean - G|| / ||s.e.||`` for G = "F" (Eq. (eff-flow)), "phi not halved"
        and "(S0+S1)w not halved" (its two factor-2 variants).
    noise_rel : dict of str to dict of int to float
        Task name → batch size → the relative noise of one batch gradient,
        ``||s.d. of a batch mean|| / ||mean||``.
    """

    ratio: dict[str, dict[str, float]]
    noise_rel: dict[str, dict[int, float]]


def drift_test(
    key: jax.Array,
    tasks: Mapping[str, data.LengthscaleTask],
    w: ArrayLike,
    *,
    num: int = 2**15,
    batches: Sequence[int] = (500, 8000),
) -> DriftTest:
    """Compare F(w) of Eq. (eff-flow) and its factor-2 variants with the Monte Carlo mean of -grad(batch MSE).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key: task ``j`` (in order) draws its examples from ``jax.random.fold_in(key, j)``
        (:func:`monte_carlo_drift`).
    tasks : mapping of str to LengthscaleTask
        Non-empty.
    w : array_like, shape (n,)
        One weight vector.
    num : int
        Monte Carlo examples per task.
    batches : sequence of int
        The batch sizes whose relative noise is reported.

    Returns
    -------
    DriftTest
    """
    if not isinstance(tasks, Mapping) or not tasks:
        raise TypeError(f"tasks must be a non-empty dict of name to LengthscaleTask, got {type(tasks).__name__}")
    w = np.asarray(w)
    if w.ndim != 1:
        raise ValueError(f"w must be one weight vector (n,), got shape {w.shape}")
    batches = [v.integer("batches", b, minimum=1) for b in batches]
    n = w.shape[0]
    ratio, noise_rel = {}, {}
    for j, (name, task) in enumerate(tasks.items()):
        s0, s1 = task.covariances(n)
        phi = theory.amplifier_of(task.model1.marginal)
        mc = monte_carlo_drift(jax.random.fold_in(key, j), task, w, num=num, n=n)
        F = np.asarray(theory.effective_vector_field(w, phi, s0, s1))
        a = np.asarray(theory.amplifier_argument(w, s1))
        variants = {
            "F": F,
            "phi not halved": F + 0.5 * np.asarray(theory.evaluate_amplifier(phi, a)),
            "(S0+S1)w not halved": F - 0.5 * np.asarray((s0 + s1) @ w),
        }
        se = np.linalg.norm(mc.stderr)
        ratio[name] = {k: float(np.linalg.norm(mc.mean - G) / se) for k, G in variants.items()}
        noise_rel[name] = {B: float(se * math.sqrt(mc.num / B) / np.linalg.norm(mc.mean)) for B in batches}
    return DriftTest(ratio, noise_rel)


# -------------------------------------------------------------------------------------------------
# the paper code's Taylor flow (figures/fig3a.py)
# -------------------------------------------------------------------------------------------------
def fig3a_amplifier(marginal: Any) -> theory.CubicTaylor:
    r"""Return the φ with which Eq. (5)'s Euler step is the step of the paper's ``figures/fig3a.py``.

    ``simulate_kurtosis`` in ``figures/fig3a.py`` (``leonlufkin/Localization``, commit ``5ebb565``,
    lines 107–120), which integrates the Taylor flow of the paper's Fig. 3, steps

    .. math::

       w \leftarrow w + \tau\Bigl[f(a) - \tfrac12(\Sigma_0+\Sigma_1)w\Bigr],

       f(a) = \sqrt{2/\pi}\,a + \frac{3-\kappa}{6}\,a^3,

    with κ the marginal's kurtosis :math:`\mathbb E[X^4]/\mathbb E[X^2]^2`. The book's Euler step of
    Eq. (5), :math:`w\leftarrow w+\tau\cdot\tfrac12[\varphi(a)-(\Sigma_0+\Sigma_1)w]`
    (``theory.integrate_effective``), is that step when :math:`\varphi=2f`: the code doubles φ
    against the decay, and its cubic keeps :math:`\sqrt{2/\pi}` on the linear term only. Since
    :math:`a` does not change when :math:`w` is scaled, the doubled flow from :math:`w_0` is exactly
    twice the flow with φ = f from :math:`w_0/2`: the doubling changes the size of the field, not its
    shape.

    Parameters
    ----------
    marginal : Marginal
        A ``localization.data`` marginal with a finite fourth moment (unit variance, as every task's).

    Returns
    -------
    theory.CubicTaylor
        :math:`2f`: first-order coefficient :math:`2\sqrt{2/\pi}`, third derivative :math:`2(3-\kappa)`.

    Raises
    ------
    TypeError
        ``marginal`` has no ``variance`` and ``fourth_moment``.
    ValueError
        The fourth moment is not finite, or the variance is not positive.
    """
    try:
        var, m4 = float(marginal.variance), float(marginal.fourth_moment)
    except AttributeError:
        raise TypeError(
            f"marginal must be a localization.data marginal (variance, fourth_moment), got {type(marginal).__name__}"
        ) from None
    if not (math.isfinite(var) and var > 0):
        raise ValueError(f"marginal must have a finite positive variance, got {var}")
    if not math.isfinite(m4):
        raise ValueError(f"marginal must have a finite fourth moment (fig3a.py's cubic needs it), got {m4}")
    kappa = m4 / var**2
    return theory.CubicTaylor(
        jnp.asarray(2.0 * math.sqrt(2.0 / math.pi), jnp.float64), jnp.asarray(2.0 * (3.0 - kappa), jnp.float64)
    )
