r"""The gated deep linear network (GDLN) model of the ReLU neuron: flow, exact solution, OLS limit, loss.

Model (notes 001 Eq. (46), notes 003 Eq. (5), without their factor :math:`1/K`, which only rescales
the weights): :math:`P` gates :math:`g_p(x)\in\{0,1\}` (a :class:`~localization.theory.gates.Gating`)
and one weight vector :math:`w_p\in\mathbb R^N` per gate,

.. math::

    \hat y(x) &= \sum_{p=1}^P g_p(x)\,\langle w_p, x\rangle = \langle w, \tilde x\rangle,\\
    \tilde x &= \tilde g(x)\otimes x\in\mathbb R^{PN},\qquad w = (w_1;\dots;w_P).

With the book's loss :math:`L = \mathbb E[(Y-\hat y)^2]` and the gradient flow
:math:`\dot w = -\nabla L` (:math:`t` = steps × learning rate),

.. math::

    \tau\,\dot w &= b - A w,\qquad \tau = \tfrac12,\\
    b &= \mathbb E[Y\tilde x] = (\Sigma^{yx}(p))_p,\\
    A &= \mathbb E[\tilde x\tilde x^\top] = (\Sigma^{xx}(p,q))_{pq},

the block system of notes 001 Eq. (51) / notes 003 Eq. (10) (their :math:`K\tau`; see the chapter
for their factor :math:`1/K`). :math:`A` is symmetric positive semi-definite. With
:math:`A = Q\Lambda Q^\top`, :math:`u = Q^\top w`, :math:`c = Q^\top b` and :math:`s = t/\tau`,

.. math::

    u_k(t) = e^{-\lambda_k s}u_k(0) + c_k\,s\,\frac{1-e^{-\lambda_k s}}{\lambda_k s}

(the last factor is 1 at :math:`\lambda_k = 0`): :func:`flow_solution`. From :math:`w(0)=0`,

.. math::

    L(t) &= \mathbb E[Y^2] - \sum_k \frac{c_k^2}{\lambda_k}\bigl(1-e^{-2\lambda_k s}\bigr)\\
    &\xrightarrow[t\to\infty]{} L_\infty = \mathbb E[Y^2] - b^\top A^{+} b

(:func:`loss_curve`, :func:`limiting_loss`; notes 001 Eq. (62)–(63), notes 003 Eq. (21)–(22)). The
limit :math:`w_\infty = A^{+}b` (:func:`ols_limit`) is the population OLS regression of :math:`Y` on
:math:`\tilde x`. When :math:`A` is singular, :math:`b` still lies in its range (:math:`b = \mathbb
E[Y\tilde x]` and :math:`A = \mathbb E[\tilde x\tilde x^\top]`), the component of :math:`w(0)` in the
null space never moves, and the flow from :math:`w(0)=0` ends at the least-norm solution
:math:`A^{+}b`; :func:`ols_limit` then returns ``singular=True`` and the pseudo-inverse solution.

The moments :math:`b` and :math:`A` are in :mod:`localization.theory.gdln_moments`
(:func:`gate_correlation` is re-exported here). Everything is float64 NumPy.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from jax.typing import ArrayLike

from localization import validation as v
from localization.theory.gdln_moments import gate_correlation

__all__ = [
    "BOOK_TIME_CONSTANT",
    "gate_correlation",
    "OLSLimit",
    "vector_field",
    "flow_solution",
    "ols_limit",
    "limiting_loss",
    "loss_curve",
    "race_rates",
]

#: :math:`\tau` of the block system in the book's convention (loss without 1/2, :math:`\dot w=-\nabla L`).
BOOK_TIME_CONSTANT = 0.5


def _check_system(A: ArrayLike, b: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Return the validated float64 ``(A (D, D), b (D,))``: finite, ``A`` symmetric (to 1e-10 relative).

    ``A`` must be positive semi-definite; eigenvalues below ``-1e-10 * max|λ|`` raise ``ValueError``.
    """
    A = np.asarray(v.float_array("A", A, ndim_min=2), dtype=np.float64)
    b = np.asarray(v.float_array("b", b, ndim_min=1), dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be a square (D, D) matrix, got shape {A.shape}")
    if b.shape != (A.shape[0],):
        raise ValueError(f"b must have shape ({A.shape[0]},) to match A {A.shape}, got {b.shape}")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b))):
        raise ValueError("A and b must be finite, got non-finite entries")
    scale = max(float(np.max(np.abs(A))), 1e-300)
    if np.max(np.abs(A - A.T)) > 1e-10 * scale:
        raise ValueError(f"A must be symmetric, got max|A - A^T| = {np.max(np.abs(A - A.T)):.3g}")
    return 0.5 * (A + A.T), b


def _eig(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lam, Q = np.linalg.eigh(A)
    top = max(float(np.max(np.abs(lam))), 1e-300)
    if lam[0] < -1e-10 * top:
        raise ValueError(f"A must be positive semi-definite, got an eigenvalue {lam[0]:.3g} (largest {top:.3g})")
    return np.clip(lam, 0.0, None), Q


def _time_constant(tau: Any) -> float:
    return v.positive("time_constant", tau)


def vector_field(A: ArrayLike, b: ArrayLike, w: ArrayLike, time_constant: float = BOOK_TIME_CONSTANT) -> np.ndarray:
    r"""Return the GDLN vector field :math:`\dot w = (b - A w)/\tau`.

    Parameters
    ----------
    A : ArrayLike
        (D, D) symmetric positive semi-definite moment matrix.
    b : ArrayLike
        (D,) drive.
    w : ArrayLike
        (..., D) weights.
    time_constant : float
        τ > 0 (default :data:`BOOK_TIME_CONSTANT`).

    Returns
    -------
    np.ndarray
        (..., D) float64.
    """
    A, b = _check_system(A, b)
    w = np.asarray(v.float_array("w", w, ndim_min=1, last_dim=A.shape[0]), dtype=np.float64)
    return (b - w @ A) / _time_constant(time_constant)


def flow_solution(
    A: ArrayLike, b: ArrayLike, w0: ArrayLike, t: ArrayLike, time_constant: float = BOOK_TIME_CONSTANT
) -> np.ndarray:
    r"""Return the exact solution :math:`w(t)` of :math:`\tau\dot w = b - Aw` (module docstring).

    By eigendecomposition. Zero eigenvalues are handled exactly (linear growth along
    :math:`c_k`, which vanishes when :math:`b` is in the range of :math:`A`, as for every GDLN).

    Parameters
    ----------
    A : ArrayLike
        (D, D) symmetric positive semi-definite moment matrix.
    b : ArrayLike
        (D,) drive.
    w0 : ArrayLike
        (D,) initial weights.
    t : ArrayLike
        A time >= 0 or (T,) times.
    time_constant : float
        τ > 0 (default :data:`BOOK_TIME_CONSTANT`).

    Returns
    -------
    np.ndarray
        (D,) or (T, D) float64.
    """
    A, b = _check_system(A, b)
    w0 = np.asarray(v.float_array("w0", w0, ndim_min=1, last_dim=A.shape[0]), dtype=np.float64)
    if w0.shape != b.shape:
        raise ValueError(f"w0 must have shape {b.shape}, got {w0.shape}")
    t_arr = np.asarray(t, dtype=np.float64)
    if t_arr.ndim > 1 or not np.all(np.isfinite(t_arr)) or np.any(t_arr < 0):
        raise ValueError(f"t must be a finite time >= 0 or a 1-D array of them, got {t!r}")
    s = np.atleast_1d(t_arr) / _time_constant(time_constant)
    lam, Q = _eig(A)
    u0, c = Q.T @ w0, Q.T @ b
    z = lam[None, :] * s[:, None]
    decay = np.exp(-z)
    # (1 - e^{-z})/z, equal to 1 at z = 0 (no 0/0)
    ratio = np.where(z > 1e-12, -np.expm1(-z) / np.where(z > 1e-12, z, 1.0), 1.0 - 0.5 * z)
    u = decay * u0[None, :] + c[None, :] * s[:, None] * ratio
    w = u @ Q.T
    return w[0] if t_arr.ndim == 0 else w


class OLSLimit(NamedTuple):
    """The end point of the GDLN flow from :math:`w(0)=0`.

    ``w``: (D,) :math:`A^{+}b`; ``singular``: whether :math:`A` has zero eigenvalues (relative
    tolerance ``rtol``), in which case ``w`` is the least-norm solution and the flow from another
    :math:`w(0)` ends at ``w`` plus the null-space part of :math:`w(0)`; ``rank``: numerical rank.
    """

    w: np.ndarray
    singular: bool
    rank: int


def ols_limit(A: ArrayLike, b: ArrayLike, rtol: float = 1e-10) -> OLSLimit:
    r"""Return :math:`w_\infty = A^{+}b` (least norm when ``A`` is singular; see :class:`OLSLimit`).

    Raises ``ValueError`` when ``b`` is not in the range of ``A`` (residual above ``1e-8`` relative):
    then no limit exists (a zero-rate mode with a drive grows linearly).

    Parameters
    ----------
    A : ArrayLike
        (D, D) symmetric positive semi-definite moment matrix.
    b : ArrayLike
        (D,) drive.
    rtol : float
        Relative tolerance in (0, 1) below which an eigenvalue counts as zero.

    Returns
    -------
    OLSLimit
        ``w`` (D,), ``singular`` and ``rank``.
    """
    A, b = _check_system(A, b)
    rtol = v.in_range("rtol", rtol, 0.0, 1.0, low_open=True, high_open=True)
    lam, Q = _eig(A)
    keep = lam > rtol * max(float(lam[-1]), 1e-300)
    c = Q.T @ b
    if np.linalg.norm(c[~keep]) > 1e-8 * max(np.linalg.norm(b), 1e-300):
        raise ValueError("b must lie in the range of A (it does for GDLN moments): the flow has no limit")
    u = np.where(keep, c / np.where(keep, lam, 1.0), 0.0)
    return OLSLimit(Q @ u, bool(not np.all(keep)), int(np.sum(keep)))


def _second_moment_y(value: Any) -> float:
    return v.positive("second_moment_y", value)


def limiting_loss(A: ArrayLike, b: ArrayLike, second_moment_y: float = 0.5, rtol: float = 1e-10) -> float:
    r"""Return :math:`L_\infty = \mathbb E[Y^2] - b^\top A^{+}b` (notes 001 Eq. (62), notes 003 Eq. (21)).

    ``second_moment_y`` is :math:`\mathbb E[Y^2]`: 1/2 for balanced labels in {0, 1} (default).

    Parameters
    ----------
    A : ArrayLike
        (D, D) symmetric positive semi-definite moment matrix.
    b : ArrayLike
        (D,) drive.
    second_moment_y : float
        :math:`\mathbb E[Y^2]` > 0.
    rtol : float
        As in :func:`ols_limit`.

    Returns
    -------
    float
        :math:`L_\infty`.
    """
    limit = ols_limit(A, b, rtol)
    return _second_moment_y(second_moment_y) - float(b @ limit.w)


def loss_curve(
    A: ArrayLike, b: ArrayLike, t: ArrayLike, second_moment_y: float = 0.5, time_constant: float = BOOK_TIME_CONSTANT
) -> np.ndarray:
    r"""Return :math:`L(t)` along the flow from :math:`w(0)=0` (module docstring).

    Early on :math:`L(t) = \mathbb E[Y^2] - 2\,\|b\|^2 t/\tau + O(t^2)`; at the end :math:`L_\infty`.

    Parameters
    ----------
    A : ArrayLike
        (D, D) symmetric positive semi-definite moment matrix.
    b : ArrayLike
        (D,) drive.
    t : ArrayLike
        A time >= 0 or (T,) times.
    second_moment_y : float
        :math:`\mathbb E[Y^2]` > 0.
    time_constant : float
        τ > 0 (default :data:`BOOK_TIME_CONSTANT`).

    Returns
    -------
    np.ndarray
        (T,) float64.
    """
    A, b = _check_system(A, b)
    t_arr = np.atleast_1d(np.asarray(t, dtype=np.float64))
    if t_arr.ndim != 1 or not np.all(np.isfinite(t_arr)) or np.any(t_arr < 0):
        raise ValueError(f"t must be a finite time >= 0 or a 1-D array of them, got {t!r}")
    s = t_arr / _time_constant(time_constant)
    lam, Q = _eig(A)
    c = Q.T @ b
    z = 2.0 * lam[None, :] * s[:, None]
    # c^2 (1 - e^{-2 lam s}) / lam = c^2 * 2 s * (1 - e^{-z})/z
    ratio = np.where(z > 1e-12, -np.expm1(-z) / np.where(z > 1e-12, z, 1.0), 1.0 - 0.5 * z)
    gain = (c[None, :] ** 2) * 2.0 * s[:, None] * ratio
    return _second_moment_y(second_moment_y) - np.sum(gain, axis=1)


def race_rates(A: ArrayLike, time_constant: float = BOOK_TIME_CONSTANT) -> np.ndarray:
    r"""Return the decay rates :math:`\lambda_k/\tau` of the modes of the flow, ascending ((D,) float64).

    The smallest non-zero rate sets the slowest transient (notes 001 §5.1.1's "race" criterion).

    Parameters
    ----------
    A : ArrayLike
        (D, D) symmetric positive semi-definite moment matrix.
    time_constant : float
        τ > 0 (default :data:`BOOK_TIME_CONSTANT`).

    Returns
    -------
    np.ndarray
        (D,) float64 rates.
    """
    A, _ = _check_system(A, np.zeros(np.shape(A)[0]))
    lam, _ = _eig(A)
    return lam / _time_constant(time_constant)
