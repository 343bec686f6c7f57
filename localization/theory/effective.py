r"""The effective early-time flow of a single ReLU neuron (paper Lemma 3.1, Eq. (5); App. C.1–C.2).

Conventions (book-wide): loss :math:`\mathcal L(w)=\mathbb E[(Y-\mathrm{ReLU}\langle w,X\rangle)^2]`
(paper Eq. (9), no ½), labels :math:`Y\in\{0,1\}` with :math:`P(Y=1)=\tfrac12`, time
:math:`t=\text{steps}\times\text{learning rate}`, so plain gradient descent is forward Euler of
:math:`\dot w=-\nabla\mathcal L`.

Derivation of the factor (checked in ``tests/test_effective.py``). With :math:`h=\langle w,X\rangle`,
:math:`\nabla\mathcal L=-2\mathbb E[Y\,\mathbb 1(h\ge0)X]+2\mathbb E[\mathrm{ReLU}(h)X]`. Sign symmetry
(S3) maps :math:`h\mathbb 1(h\ge0)X\mapsto h\mathbb 1(h\le0)X`, so
:math:`\mathbb E[\mathrm{ReLU}(h)X]=\tfrac12\mathbb E[hX]=\tfrac14(\Sigma_0+\Sigma_1)w`, and
:math:`\mathbb E[Y\mathbb 1(h\ge0)X]=\tfrac12\mathbb E[\mathbb 1(h\ge0)X\mid Y=1]`. Hence

.. math::

    -\nabla\mathcal L &= \mathbb E[\mathbb 1(h\ge0)X\mid Y=1] \\
    &\quad -\tfrac12(\Sigma_0+\Sigma_1)w .

Under A1–A3 (unit marginal variance) the first term is :math:`\tfrac12\varphi(\Sigma_1w/\sqrt{w^\top\Sigma_1w})`
(App. C.2), giving

.. math::

    \frac{dw}{dt} = \tfrac12\,\varphi(a) -\tfrac12(\Sigma_0+\Sigma_1)w,

    a = \frac{\Sigma_1w}{\sqrt{w^\top\Sigma_1w}},

which is paper Eq. (5) with :math:`\tau=1`. For Gaussian data the first term is exact:
:math:`\mathbb E[\mathbb 1(h\ge0)X\mid Y=1]=\Sigma_1w/\sqrt{2\pi\,w^\top\Sigma_1w}`, and with
:math:`\varphi(a)=\sqrt{2/\pi}\,a` Eq. (5) *is* the exact expected-gradient flow
(:mod:`localization.theory.gaussian`, which also covers elliptical data).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from localization import validation as v
from localization.pytree import pytree_dataclass, static_field
from localization.theory.amplifier import PytreeAmplifier
from localization.trajectory import Trajectory, checkpoint_gaps, checkpoint_steps, checkpointed_scan

__all__ = [
    "effective_vector_field",
    "effective_jacobian",
    "effective_fixed_point",
    "integrate_effective",
    "amplifier_argument",
]


# -------------------------------------------------------------------------------------------------
# helpers
# -------------------------------------------------------------------------------------------------
@pytree_dataclass(eq=False)
class _Static:
    """Wrap an arbitrary (hashable) callable as a leafless pytree so it can enter a jitted function."""

    fn: Callable = static_field()


def _as_pytree_phi(phi):
    """Pass a :class:`PytreeAmplifier` as it is; wrap any other callable as a leafless pytree."""
    if not callable(phi):
        raise TypeError(f"phi must be callable (e.g. localization.theory.amplifier_of(...)), got {type(phi).__name__}")
    if isinstance(phi, PytreeAmplifier):
        return phi
    return _Static(phi)


def _eval_phi(phi, a):
    if isinstance(phi, PytreeAmplifier):
        return phi.core(a)
    return phi.fn(a)


def _check_covariances(cov0, cov1, n=None):
    s0, s1 = v.covariance_pair(("cov0", "cov1"), cov0, cov1)
    if n is not None and s0.shape[0] != n:
        raise ValueError(f"cov0 and cov1 must have shape ({n}, {n}) to match w, got {s0.shape}")
    diag = np.diag(s1)
    if not np.allclose(diag, 1.0, rtol=0, atol=1e-8):
        raise ValueError(
            "cov1 must have unit diagonal (Lemma 3.1 and Eq. (6) assume unit marginal variance: "
            f"A1 at j = i reads E[X_i | X_i = x] = x * Sigma_ii), got diagonal in [{diag.min()}, {diag.max()}]"
        )
    return jnp.asarray(s0), jnp.asarray(s1)


def _check_w(name, w, n=None):
    w = np.asarray(v.float_array(name, w, ndim_min=1), dtype=np.float64)
    if n is not None and w.shape[-1] != n:
        raise ValueError(f"{name} must have last axis of length {n} (the covariance size), got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{name} must be finite")
    return w


def _amplifier_argument(w, cov1):
    u = w @ cov1  # Σ1 symmetric: (..., n)
    q = jnp.sum(w * u, axis=-1, keepdims=True)
    # |a_i| <= sqrt(Σ1_ii) = 1 by Cauchy–Schwarz in the Σ1 inner product; clip rounding excursions.
    return jnp.clip(u / jnp.sqrt(q), -1.0, 1.0)


def _field(w, phi, cov0, cov1):
    a = _amplifier_argument(w, cov1)
    return 0.5 * (_eval_phi(phi, a) - w @ (cov0 + cov1))


# -------------------------------------------------------------------------------------------------
# public API
# -------------------------------------------------------------------------------------------------
def amplifier_argument(w: ArrayLike, cov1: ArrayLike) -> jax.Array:
    r"""Return the argument of φ in Eq. (5), :math:`a=\Sigma_1w/\sqrt{w^\top\Sigma_1w}`.

    Each entry lies in [-1, 1] (Cauchy–Schwarz; equality iff :math:`w\propto e_i`); rounding
    excursions are clipped.

    Parameters
    ----------
    w : (..., n) non-zero weights (``ValueError`` at 0).
    cov1 : (n, n) covariance :math:`\Sigma_1` of class 1.

    Returns
    -------
    jax.Array
        (..., n) float64.
    """
    s1 = np.asarray(v.float_array("cov1", cov1, ndim_min=2), dtype=np.float64)
    w = _check_w("w", w, s1.shape[-1])
    if np.any(np.einsum("...i,ij,...j->...", w, s1, w) <= 0):
        raise ValueError("w must be non-zero (w^T Sigma1 w > 0), got a zero weight vector")
    return _amplifier_argument(jnp.asarray(w), jnp.asarray(s1))


def effective_vector_field(
    w: ArrayLike, phi: PytreeAmplifier | Callable, cov0: ArrayLike, cov1: ArrayLike
) -> jax.Array:
    r"""Return the right-hand side of the effective flow (paper Eq. (5), τ = 1, book time convention).

    .. math::

       \dot w=\tfrac12\,\varphi(a)-\tfrac12(\Sigma_0+\Sigma_1)w,

       a=\Sigma_1w/\sqrt{w^\top\Sigma_1w}.

    Parameters
    ----------
    w : (..., n) array, non-zero rows.
    phi : callable amplifier, e.g. ``theory.amplifier_of(marginal)`` or ``theory.amplifier_taylor(m)``
        or any vectorised jnp function of ``a`` in [-1, 1].
    cov0, cov1 : (n, n) symmetric covariances of the two classes; ``cov1`` (longer
        length-scale, y = 1) must have unit diagonal.

    Returns
    -------
    dw/dt : (..., n) float64 array. Equals ``-∇L`` for Gaussian data with the Gaussian φ (see
        ``theory.gaussian.flow``).
    """
    phi = _as_pytree_phi(phi)
    s0, s1 = _check_covariances(cov0, cov1)
    w = _check_w("w", w, s1.shape[0])
    if np.any(np.einsum("...i,ij,...j->...", w, np.asarray(s1), w) <= 0):
        raise ValueError("w must be non-zero (w^T Sigma1 w > 0), got a zero weight vector")
    return _field_jit(jnp.asarray(w), phi, s0, s1)


_field_jit = jax.jit(_field)
_jacobian_jit = jax.jit(jax.jacfwd(_field))


def _check_single_w(name, w, s1):
    w = _check_w(name, w, s1.shape[0])
    if w.ndim != 1:
        raise ValueError(f"{name} must be a single weight vector of shape ({s1.shape[0]},), got shape {w.shape}")
    if not float(w @ np.asarray(s1) @ w) > 0:
        raise ValueError(f"{name} must be non-zero ({name}^T Sigma1 {name} > 0), got a zero weight vector")
    return w


def effective_jacobian(w: ArrayLike, phi: PytreeAmplifier | Callable, cov0: ArrayLike, cov1: ArrayLike) -> np.ndarray:
    r"""Return the Jacobian :math:`\partial F_i/\partial w_j` of :func:`effective_vector_field` at one weight vector.

    By forward-mode automatic differentiation (float64, exact up to rounding), so ``phi`` must be
    differentiable in JAX (``theory.amplifier_of``, ``theory.amplifier_taylor``, a tabulated φ is only
    piecewise linear). At a fixed point its eigenvalues decide stability: the fixed point is stable
    when every real part is negative and a saddle when one is positive.

    Parameters
    ----------
    w : (n,) non-zero weight vector.
    phi, cov0, cov1 : as for :func:`effective_vector_field`.

    Returns
    -------
    (n, n) float64 NumPy array; row i is the gradient of :math:`F_i`.
    """
    phi = _as_pytree_phi(phi)
    s0, s1 = _check_covariances(cov0, cov1)
    w = _check_single_w("w", w, s1)
    return np.asarray(_jacobian_jit(jnp.asarray(w), phi, s0, s1), dtype=np.float64)


def effective_fixed_point(
    w0: ArrayLike,
    phi: PytreeAmplifier | Callable,
    cov0: ArrayLike,
    cov1: ArrayLike,
    *,
    tol: float = 1e-13,
    max_iter: int = 50,
) -> tuple[np.ndarray, float]:
    r"""Find a fixed point :math:`F(w^*)=0` of the effective flow by Newton's method from ``w0``.

    Iterates :math:`w\leftarrow w-J(w)^{-1}F(w)` (:func:`effective_jacobian`) until
    :math:`\max_i|F_i(w)|\le` ``tol``. Newton converges to the fixed point nearest in its basin,
    whatever its stability, so a saddle is found as readily as a stable state: start it from the end
    of a flow run that has (nearly) stopped moving.

    Parameters
    ----------
    w0 : (n,) non-zero starting weights.
    phi, cov0, cov1 : as for :func:`effective_vector_field` (``phi`` differentiable in JAX).
    tol : positive absolute tolerance on :math:`\max_i|F_i|` (default 1e-13).
    max_iter : int ≥ 1, the most Newton steps taken.

    Returns
    -------
    ``(w_star, residual)``: (n,) float64 weights and :math:`\max_i|F_i(w^*)|` (≤ ``tol``).

    Raises
    ------
    ValueError
        when the iteration does not reach ``tol`` within ``max_iter`` steps, reaches ``w = 0`` or
        meets a singular Jacobian.
    """
    phi = _as_pytree_phi(phi)
    s0, s1 = _check_covariances(cov0, cov1)
    w = _check_single_w("w0", w0, s1)
    tol = v.positive("tol", tol)
    max_iter = v.integer("max_iter", max_iter, minimum=1)
    residual = math.inf
    for _ in range(max_iter + 1):
        if not (np.all(np.isfinite(w)) and float(w @ np.asarray(s1) @ w) > 0):
            raise ValueError("effective_fixed_point: the Newton iteration left the domain (w = 0 or non-finite)")
        field = np.asarray(_field_jit(jnp.asarray(w), phi, s0, s1), dtype=np.float64)
        residual = float(np.max(np.abs(field)))
        if residual <= tol:
            return w, residual
        jac = np.asarray(_jacobian_jit(jnp.asarray(w), phi, s0, s1), dtype=np.float64)
        try:
            w = w - np.linalg.solve(jac, field)
        except np.linalg.LinAlgError:
            raise ValueError("effective_fixed_point: the Jacobian is singular at an iterate") from None
    raise ValueError(
        f"effective_fixed_point: max |F| = {residual:.3g} > tol = {tol:.3g} after max_iter = {max_iter} "
        "Newton steps (start closer to the fixed point, or raise tol or max_iter)"
    )


def _step(w, dt, phi, s0, s1, method, substeps):
    h = dt / substeps

    def one(_, w):
        if method == "euler":
            return w + h * _field(w, phi, s0, s1)
        k1 = _field(w, phi, s0, s1)
        k2 = _field(w + 0.5 * h * k1, phi, s0, s1)
        k3 = _field(w + 0.5 * h * k2, phi, s0, s1)
        k4 = _field(w + h * k3, phi, s0, s1)
        return w + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

    return jax.lax.fori_loop(0, substeps, one, w)


@partial(jax.jit, static_argnames=("method", "substeps"))
def _integrate(w0, phi, s0, s1, lr, gaps, *, method, substeps):
    """w0 (B, n); gaps (C,) steps between consecutive checkpoints → weights (B, C, n)."""
    step = lambda w, _: _step(w, lr, phi, s0, s1, method, substeps)  # noqa: E731
    return jax.vmap(lambda w: checkpointed_scan(step, w, gaps))(w0)


def integrate_effective(
    w0: ArrayLike,
    phi: PytreeAmplifier | Callable,
    cov0: ArrayLike,
    cov1: ArrayLike,
    *,
    lr: float,
    steps: int,
    checkpoints: int | Sequence[int],
    method: str = "euler",
    substeps: int = 1,
) -> Trajectory:
    r"""Integrate the effective flow (paper Eq. (5), τ = 1) as the paper's code does.

    One step of size ``lr`` per SGD step, so ``times = steps × lr`` matches ``localization.train``;
    the loop is :func:`localization.trajectory.checkpointed_scan`.

    Parameters
    ----------
    w0 : (..., n) initial weights (leading axes = independent initialisations, vmapped).
    phi : amplifier callable (``theory.amplifier_of(m)``, ``theory.amplifier_taylor(m)`` or a jnp function).
    cov0, cov1 : (n, n) class covariances (``cov1`` unit diagonal).
    lr : step size (> 0) = the SGD learning rate.
    steps : number of steps (int ≥ 1).
    checkpoints : int C (C evenly spaced step indices from 0 to ``steps`` inclusive, rounded, duplicates
        dropped; C = 1 means only the final step) or a non-decreasing 1-D sequence of step indices in
        [0, steps].
    method : ``"euler"`` (forward Euler, the paper's scheme, default) or ``"rk4"`` (classical
        Runge–Kutta with the same step, for a more accurate solution of the ODE itself).
    substeps : int ≥ 1; each step of size ``lr`` is split into ``substeps`` equal sub-steps.

    Returns
    -------
    Trajectory (``localization.trajectory.Trajectory``) with ``times`` (C,) = checkpoint steps × lr,
    ``steps`` (C,), ``weights`` (..., C, n) float64 (the state *after* that many steps), ``loss=None``.
    Checkpoints are parsed by ``localization.trajectory.checkpoint_steps`` (same convention as training).
    """
    phi = _as_pytree_phi(phi)
    lr = v.positive("lr", lr)
    steps = v.integer("steps", steps, minimum=1)
    substeps = v.integer("substeps", substeps, minimum=1)
    if method not in ("euler", "rk4"):
        raise ValueError(f"method must be 'euler' or 'rk4', got {method!r}")
    s0, s1 = _check_covariances(cov0, cov1)
    n = s1.shape[0]
    w0 = _check_w("w0", w0, n)
    if np.any(np.einsum("...i,ij,...j->...", w0, np.asarray(s1), w0) <= 0):
        raise ValueError("w0 must be non-zero (w0^T Sigma1 w0 > 0) for every initialisation")
    ck = checkpoint_steps(checkpoints, steps)
    gaps = checkpoint_gaps(ck)
    lead = w0.shape[:-1]
    ws = _integrate(
        jnp.asarray(w0.reshape(-1, n)),
        phi,
        s0,
        s1,
        jnp.asarray(lr),
        jnp.asarray(gaps),
        method=method,
        substeps=substeps,
    )
    weights = ws.reshape(*lead, ck.size, n)
    return _make_trajectory(ck, lr, weights)


def _make_trajectory(ck, lr, weights):
    times = v.float64("times", ck * lr)
    return Trajectory(times=times, steps=jnp.asarray(ck), weights=weights, loss=None)
