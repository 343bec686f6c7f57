r"""The single ReLU neuron's exact gradient flow on two laws on :math:`\{-1,+1\}^n` (notes 002 §3).

Model (paper (M2)): :math:`\hat y=\mathrm{ReLU}(\langle w,x\rangle)`, loss :math:`\mathcal L(w)=\mathbb
E[(Y-\hat y(X))^2]` with **no** ½ (paper Eq. (9)), balanced labels :math:`P(Y=1)=P(Y=0)=\tfrac12`,
:math:`X\mid Y=y\sim p_y` on the hypercube. Enumerating the :math:`2^n` vertices gives the loss
exactly (:func:`expected_loss`),

.. math::

   \begin{aligned}
   \mathcal L(w)={}&\tfrac12\sum_x p_1(x)\bigl(1-\mathrm{ReLU}(\langle w,x\rangle)\bigr)^2\\
   &+\tfrac12\sum_x p_0(x)\,\mathrm{ReLU}(\langle w,x\rangle)^2,
   \end{aligned}

and, with :math:`\mathrm{ReLU}'(s)=\mathbb 1(s>0)` (JAX's convention at :math:`s=0`), its gradient
flow (:func:`flow`; the factor 2 of the square cancels the ½ of the balanced labels)

.. math::

   \begin{aligned}
   \dot w&=-\nabla\mathcal L(w)=c(w)-A(w)\,w,\\
   c(w)&=\mathbb E_1\bigl[\mathbb 1(\langle w,X\rangle>0)X\bigr],\\
   A(w)&=\sum_{y\in\{0,1\}}\mathbb E_y\bigl[\mathbb 1(\langle w,X\rangle>0)XX^\top\bigr].
   \end{aligned}

For sign-symmetric laws (:math:`p_y(x)=p_y(-x)`: the Ising ring, the law of :math:`\operatorname{sign}Z`)
pairing :math:`x` with :math:`-x` gives :math:`A(w)w=\tfrac12(\Sigma_0+\Sigma_1)w` and :math:`c(w)=f_1(w)`
(ties :math:`\langle w,x\rangle=0` contribute nothing to either), so the flow is the book's
:math:`f_1(w)-\tfrac12(\Sigma_0+\Sigma_1)w` (:mod:`localization.theory.hypercube`, Eq. (hc-fixed)).

:math:`c` and :math:`A` are piecewise constant (they change only where :math:`\langle w,x\rangle` changes
sign on some vertex), so on each cell the flow is affine and its only candidate fixed point is
:math:`A^{-1}c`. :func:`fixed_point` iterates :math:`w\leftarrow A(w)^{-1}c(w)`; when two iterates
share a cell the limit is an exact fixed point of the flow.

Laws: ``localization.experiments.hypercube.task_laws`` builds the two class laws of ``data.family_task``
on a ring of :math:`n` sites —
Ising rings (exact, :func:`localization.theory.hypercube_laws.ising_ring_law`) or the :math:`g\to\infty`
limit of NLGP, :math:`\operatorname{sign}Z`, :math:`Z\sim\mathcal N(0,C(\xi_y))`, whose law for
:math:`n>3` has no closed form and is estimated by Monte Carlo, averaged over the exact symmetries
of the law (ring shifts, reflection, global sign flip: :func:`ring_symmetry_images`).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from localization import validation as v
from localization.data.base import is_traced
from localization.pytree import pytree_dataclass, static_field
from localization.theory import hypercube_laws
from localization.trajectory import Trajectory, checkpoint_gaps, checkpoint_steps, checkpointed_scan, require_finite

__all__ = [
    "HypercubeTask",
    "ring_symmetry_images",
    "expected_loss",
    "flow",
    "flow_parts",
    "integrate",
    "fixed_point",
]


@pytree_dataclass(eq=False)
class HypercubeTask:
    """Two class laws on {-1, +1}^n with balanced labels: ``p0`` (label 0), ``p1`` (label 1).

    ``p0``, ``p1``: (2^n,) float64 probabilities in the vertex order of
    :func:`localization.theory.hypercube_laws.vertices`; ``n`` static. Build with :meth:`of` (validates).
    """

    p0: Any
    p1: Any
    n: int = static_field()

    @classmethod
    def of(cls, p0: ArrayLike, p1: ArrayLike, n: int) -> HypercubeTask:
        """Validate both laws (:func:`localization.theory.hypercube_laws.law_probabilities`) and wrap them."""
        n = v.integer("n", n, 1)
        return cls(
            jnp.asarray(hypercube_laws.law_probabilities(p0, n), jnp.float64),
            jnp.asarray(hypercube_laws.law_probabilities(p1, n), jnp.float64),
            n,
        )

    def covariances(self) -> tuple[np.ndarray, np.ndarray]:
        r"""(Σ₀, Σ₁), each (n, n) float64, :math:`\Sigma_y=\sum_x p_y(x)\,xx^\top`."""
        x = hypercube_laws.vertices(self.n)
        return tuple((x.T * np.asarray(p)) @ x for p in (self.p0, self.p1))


def ring_symmetry_images(n: int) -> np.ndarray:
    """Return the (4n, 2^n) int array whose row g is the vertex index of g(x) for every vertex x.

    The 4n maps are x -> ±R^r S^s x (shift S by s sites, reflection R^r, r in {0, 1}, global sign) of the ring.
    """
    n = hypercube_laws.check_dimension(v.integer("n", n, 2))
    x = hypercube_laws.vertices(n)
    bits = 2 ** np.arange(n)
    rows = []
    for sign in (1.0, -1.0):
        for refl in (False, True):
            y = x[:, ::-1] if refl else x
            for s in range(n):
                z = sign * np.roll(y, s, axis=1)
                rows.append(((1 - z) // 2).astype(np.int64) @ bits)
    return np.stack(rows)


def _check(w: ArrayLike, task: HypercubeTask) -> jax.Array:
    if not isinstance(task, HypercubeTask):
        raise TypeError(f"task must be a HypercubeTask, got {type(task).__name__}")
    w = jnp.asarray(w if is_traced(w) else v.finite_real_array("w", w), jnp.float64)
    if w.ndim < 1 or w.shape[-1] != task.n:
        raise ValueError(f"w must have shape (..., n) with n = {task.n}, got {w.shape}")
    return w


def _loss(w, p0, p1, x):
    """Exact loss: the expectation over the 2^n vertices with class laws p0, p1 and P(Y = 1) = 1/2.

    Not ``localization.models.mean_squared_error``, on purpose: that is a mean over a sampled batch, this
    the population mean weighted by the vertex probabilities (the 0.5 is the label prior, not a ½ factor).
    """
    h = jax.nn.relu(x @ w)
    return 0.5 * (p1 @ (1.0 - h) ** 2 + p0 @ h**2)


def expected_loss(w: ArrayLike, task: HypercubeTask) -> jax.Array:
    """Return the exact loss E[(Y - ReLU(<w, X>))^2] (paper Eq. (9), balanced labels).

    Parameters
    ----------
    w : ArrayLike
        (..., n) weights.
    task : HypercubeTask
        The two class laws on {-1, +1}^n.

    Returns
    -------
    jax.Array
        (...) float64.
    """
    w = _check(w, task)
    x = jnp.asarray(hypercube_laws.vertices(task.n))
    return jnp.vectorize(lambda v: _loss(v, task.p0, task.p1, x), signature="(n)->()")(w)


def _parts(w, p0, p1, x):
    gate = (x @ w > 0).astype(x.dtype)  # (2^n,)
    c = (gate * p1) @ x
    a = (x.T * (gate * (p0 + p1))) @ x
    return c, a


def _flow(w, p0, p1, x):
    s = x @ w
    gate = (s > 0).astype(x.dtype)
    return (gate * p1) @ x - (gate * (p0 + p1) * s) @ x


def flow_parts(w: ArrayLike, task: HypercubeTask) -> tuple[jax.Array, jax.Array]:
    r"""Return (c(w), A(w)) of the flow :math:`\dot w=c-Aw` (module docstring).

    Parameters
    ----------
    w : ArrayLike
        (..., n) weights.
    task : HypercubeTask
        The two class laws on {-1, +1}^n.

    Returns
    -------
    tuple[jax.Array, jax.Array]
        c (..., n) and A (..., n, n), float64.
    """
    w = _check(w, task)
    x = jnp.asarray(hypercube_laws.vertices(task.n))
    return jnp.vectorize(lambda v: _parts(v, task.p0, task.p1, x), signature="(n)->(n),(n,n)")(w)


def flow(w: ArrayLike, task: HypercubeTask) -> jax.Array:
    r"""Return the flow :math:`\dot w=-\nabla\mathcal L(w)=c(w)-A(w)w`, exact by enumeration.

    Parameters
    ----------
    w : ArrayLike
        (..., n) weights.
    task : HypercubeTask
        The two class laws on {-1, +1}^n.

    Returns
    -------
    jax.Array
        (..., n) float64.
    """
    w = _check(w, task)
    x = jnp.asarray(hypercube_laws.vertices(task.n))
    return jnp.vectorize(lambda v: _flow(v, task.p0, task.p1, x), signature="(n)->(n)")(w)


@partial(jax.jit, static_argnames=("n",))
def _euler(w0, p0, p1, lr, gaps, n):
    x = jnp.asarray(hypercube_laws.vertices(n))
    step = jax.vmap(lambda v: v + lr * _flow(v, p0, p1, x))
    return checkpointed_scan(lambda w, _: step(w), w0, gaps)


def integrate(
    w0: ArrayLike, task: HypercubeTask, *, lr: float, steps: int, checkpoints: int | ArrayLike = 101
) -> Trajectory:
    """Integrate :func:`flow` by forward Euler with step ``lr`` on SGD's time axis (t = steps x lr).

    It is recorded at the checkpoints of ``localization.train`` (:func:`localization.trajectory.checkpoint_steps`), so
    the trajectory overlays ``train.train_online`` from the same ``w0``.

    ``w0``: (..., n) initial weights (leading axes are independent initialisations, vmapped).
    Returns a Trajectory with ``weights`` (..., C, n) float64.
    """
    w0 = _check(w0, task)
    lr = v.positive("lr", lr)
    ck = checkpoint_steps(checkpoints, steps)
    lead = w0.shape[:-1]
    ws = _euler(w0.reshape(-1, task.n), task.p0, task.p1, jnp.float64(lr), jnp.asarray(checkpoint_gaps(ck)), task.n)
    require_finite(ws, f"the Euler iteration diverged: lr = {lr} is too large for this task")
    weights = jnp.moveaxis(ws, 0, 1).reshape(*lead, len(ck), task.n)
    return Trajectory(times=np.asarray(ck * lr, np.float64), steps=jnp.asarray(ck), weights=weights)


def fixed_point(w: ArrayLike, task: HypercubeTask, *, max_iter: int = 50) -> tuple[np.ndarray, np.ndarray]:
    r"""Iterate :math:`w\leftarrow A(w)^{-1}c(w)` from ``w`` to a fixed point of the flow (module docstring).

    ``converged`` where two successive iterates agree to 1e-12 relative (then the flow vanishes at
    ``w_star`` to round-off: each iterate solves the affine flow of the cell of the previous one).
    Raises ValueError if A(w) is singular (e.g. w = 0, where no vertex is on).

    Parameters
    ----------
    w : ArrayLike
        (..., n) starting weights.
    task : HypercubeTask
        The two class laws on {-1, +1}^n.
    max_iter : int
        Largest number of iterations, >= 1.

    Returns
    -------
    tuple[np.ndarray, np.ndarray]
        ``(w_star, converged)``: (..., n) float64 and (...) bool.
    """
    w = np.asarray(_check(w, task))
    max_iter = v.integer("max_iter", max_iter, 1)
    shape = w.shape
    cur = w.reshape(-1, task.n)
    done = np.zeros(cur.shape[0], bool)
    for _ in range(max_iter):
        c, a = (np.asarray(t) for t in flow_parts(cur, task))
        if np.any(np.linalg.eigvalsh(a).min(axis=-1) <= 1e-12):
            raise ValueError("A(w) is singular for some w (no vertex switches the neuron on): no fixed point")
        new = np.linalg.solve(a, c[..., None])[..., 0]
        done = np.linalg.norm(new - cur, axis=-1) <= 1e-12 * np.maximum(np.linalg.norm(new, axis=-1), 1e-300)
        cur = new
        if done.all():
            break
    if not np.all(np.isfinite(cur)):
        raise ValueError("fixed_point produced non-finite weights")
    return cur.reshape(shape), done.reshape(shape[:-1])
