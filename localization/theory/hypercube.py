r"""The threshold mean :math:`f(w)` for laws on the hypercube :math:`\{-1, +1\}^n` (notes 002 §2–3).

For a law :math:`p` on :math:`\{-1,+1\}^n` (notes 002 Eq. (5), the gradient of
:math:`\mathbb E\,\mathrm{ReLU}(\langle w, X\rangle)`),

.. math:: f(w) &= \mathbb E\bigl[\mathbb 1(\langle w, X\rangle \ge 0)\, X\bigr]\\
   &= \sum_{x\in\{\pm1\}^n} p(x)\,\mathbb 1(\langle w, x\rangle \ge 0)\, x,

computed **exactly** by enumerating the :math:`2^n` vertices (:func:`threshold_mean`; float64,
:math:`n \le 16` so that the :math:`(\ldots, 2^n)` table of preactivations stays small).

Ties. On the hypercube :math:`\langle w, x\rangle = 0` has positive mass for many :math:`w`
(e.g. :math:`w = e_1 + e_2`). The source's convention :math:`\mathbb 1(\cdot \ge 0)` counts ties as
*on*; consequently (derived here, tested in ``tests/test_hypercube.py``)

.. math:: f(w) + f(-w) &= \mathbb E X\\
   &\quad+ \mathbb E\bigl[\mathbb 1(\langle w, X\rangle = 0)\,X\bigr],

so :math:`f` is odd only when both terms vanish — for a sign-symmetric law
(:math:`p(x) = p(-x)`) they do, ties or not; for a law with a bias they do not (:func:`tie_mean`).
Ties are decided in floating point: :math:`|\langle w, x\rangle| \le` ``tie_tol`` counts as a tie
(default 0, exact for dyadic weights such as :math:`(2, 1, 1)`).

Closed forms (derived from :math:`\mathbb 1(y = 1) = (1 + y)/2` for :math:`y = \pm 1`, in terms of
the product moments :math:`M_S = \mathbb E[(\prod_{i\in S} X_i)\,X]`, :func:`product_moment`;
:math:`M_{\{i\}} = \Sigma e_i` with :math:`\Sigma = \mathbb E XX^\top`):

* dominance, :math:`|w_k| > \sum_{i\ne k} |w_i|` (single bump, imbalanced bumps, the condition
  :math:`\sum_{i\ge2}|w_i/w_1| < 1` of notes 002 §3): :math:`\operatorname{sign}\langle w, x\rangle
  = \operatorname{sign}(w_k x_k)` and :math:`f(w) = \tfrac12(\mathbb E X + s_k \Sigma e_k)`,
  :math:`s_k = \operatorname{sign} w_k` (:func:`dominant_closed_form`);
* balanced bumps :math:`w = s_i e_i + s_j e_j`: :math:`f = \mathbb E X - \tfrac14(\mathbb E X - s_i
  M_i - s_j M_j + s_i s_j M_{ij})` (:func:`balanced_closed_form`);
* three bumps with :math:`|w_a|, |w_b|, |w_c|` obeying strict triangle inequalities: the sign is the
  majority of :math:`y = s\odot x`, :math:`\operatorname{maj}(y) = \tfrac12(y_a+y_b+y_c-y_ay_by_c)`,
  so :math:`f = \tfrac12\mathbb E X + \tfrac14(s_aM_a + s_bM_b + s_cM_c - s_as_bs_cM_{abc})`; at
  equality :math:`|w_a| = |w_b| + |w_c|` the tie adds
  :math:`\mathbb E[\mathbb 1(y_a=-1, y_b=y_c=1)X]` to the dominant form (:func:`three_bump_closed_form`).

"f extracts the maximum of w" (notes 002 §3.1) holds exactly under dominance (above: :math:`f`
depends on :math:`w` only through :math:`k` and :math:`s_k`, for every law) and fails without it: in
the majority regime of three bumps :math:`f` weights all three coordinates (iid uniform:
:math:`f = \tfrac14(1, 1, 1)` at :math:`w = (1.5, 1.2, 1)`). A weaker statement, :math:`|f_k| \ge
|f_i|` at :math:`k = \arg\max|w_i|`, holds for laws invariant under coordinate swaps and sign flips
(iid uniform; pair :math:`x` with its :math:`i \leftrightarrow k` swap) and fails on the Ising ring.

The laws (:func:`~localization.theory.hypercube_laws.uniform_law`, the Ising ring, the law of
:math:`\operatorname{sign} Z`) and the vertex order are :mod:`localization.theory.hypercube_laws`.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations
from typing import Any

import numpy as np
from jax.typing import ArrayLike

from localization import validation as v
from localization.theory.hypercube_laws import check_dimension, law_probabilities, vertices

__all__ = [
    "threshold_mean",
    "tie_mean",
    "expected_relu",
    "product_moment",
    "dominance_margin",
    "dominant_closed_form",
    "balanced_closed_form",
    "three_bump_closed_form",
    "separation_gap",
]


def _weights(w: ArrayLike, n: int | None = None) -> np.ndarray:
    w = np.asarray(v.finite_real_array("w", w), dtype=np.float64)
    if w.ndim < 1:
        raise ValueError(f"w must have shape (..., n), got a scalar {w!r}")
    if n is not None and w.shape[-1] != n:
        raise ValueError(f"w must have last dimension n = {n}, got shape {w.shape}")
    check_dimension(w.shape[-1])
    return w


def _tol(tie_tol: Any) -> float:
    return v.nonnegative("tie_tol", tie_tol)


def threshold_mean(w: ArrayLike, p: ArrayLike | Callable, tie_tol: float = 0.0) -> np.ndarray:
    r"""f(w) = E[1(<w, X> >= 0) X] by exact enumeration (notes 002 Eq. (5)).

    Ties, :math:`|\langle w, x\rangle| \le` ``tie_tol``, count as on.

    Parameters
    ----------
    w : ArrayLike
        (..., n) weights (batched over leading axes).
    p : ArrayLike or Callable
        A law on {-1, +1}^n as in :func:`law_probabilities`.
    tie_tol : float
        Tolerance (>= 0) below which :math:`|\langle w, x\rangle|` counts as a tie.

    Returns
    -------
    np.ndarray
        (..., n) float64.
    """
    w = _weights(w)
    n = w.shape[-1]
    prob, x = law_probabilities(p, n), vertices(n)
    s = w @ x.T
    return ((s >= -_tol(tie_tol)) * prob) @ x


def tie_mean(w: ArrayLike, p: ArrayLike, tie_tol: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Return (mass, mean): P(<w, X> = 0) of shape (...,) and E[1(<w, X> = 0) X] of shape (..., n).

    Parameters
    ----------
    w, p, tie_tol
        As in :func:`threshold_mean`.

    Returns
    -------
    tuple[np.ndarray, np.ndarray]
        ``(mass, mean)``, float64.
    """
    w = _weights(w)
    n = w.shape[-1]
    prob, x = law_probabilities(p, n), vertices(n)
    tie = (np.abs(w @ x.T) <= _tol(tie_tol)) * prob
    return tie.sum(axis=-1), tie @ x


def expected_relu(w: ArrayLike, p: ArrayLike) -> np.ndarray:
    """E[ReLU(<w, X>)] of shape (...,) by enumeration (equals <w, f(w)>: f is 0-homogeneous).

    Parameters
    ----------
    w : ArrayLike
        (..., n) weights.
    p : ArrayLike or Callable
        A law on {-1, +1}^n as in :func:`law_probabilities`.

    Returns
    -------
    np.ndarray
        (...) float64.
    """
    w = _weights(w)
    n = w.shape[-1]
    prob, x = law_probabilities(p, n), vertices(n)
    return np.maximum(w @ x.T, 0.0) @ prob


def product_moment(p: ArrayLike, n: int, indices: tuple[int, ...]) -> np.ndarray:
    """M_S = E[(prod_{i in S} X_i) X], shape (n,); S = () gives E X, S = (i,) gives Sigma e_i.

    Parameters
    ----------
    p : ArrayLike or Callable
        A law on {-1, +1}^n as in :func:`law_probabilities`.
    n : int
        Dimension.
    indices : tuple[int, ...]
        The set S, integers in [0, n).

    Returns
    -------
    np.ndarray
        (n,) float64.
    """
    prob, x = law_probabilities(p, n), vertices(n)
    for i in indices:
        if not (isinstance(i, (int, np.integer)) and 0 <= i < n):
            raise ValueError(f"indices must be integers in [0, {n - 1}], got {indices!r}")
    return (np.prod(x[:, list(indices)], axis=1) * prob) @ x


def dominance_margin(w: ArrayLike) -> np.ndarray:
    r"""Return the margin :math:`|w_k| - \sum_{i\ne k}|w_i|`, :math:`k = \arg\max_i |w_i|`; > 0 iff one dominates.

    Parameters
    ----------
    w : ArrayLike
        (..., n) weights.

    Returns
    -------
    np.ndarray
        (...) float64.
    """
    a = np.abs(_weights(w))
    return 2 * a.max(axis=-1) - a.sum(axis=-1)


def _support(w: np.ndarray, size: int, name: str) -> list[int]:
    idx = [int(i) for i in np.flatnonzero(w)]
    if len(idx) != size:
        raise ValueError(f"{name} needs w with exactly {size} non-zero entries, got {len(idx)}")
    return idx


def dominant_closed_form(w: ArrayLike, p: ArrayLike) -> np.ndarray:
    r"""Return (E X + sign(w_k) Sigma e_k) / 2 for a single w (n,) with :math:`|w_k| > \sum_{i\ne k}|w_i|`.

    Raises ValueError when no entry dominates (then sign<w, x> = sign(w_k x_k) fails for some x).

    Parameters
    ----------
    w, p : ArrayLike
        One (n,) weight vector; a law on {-1, +1}^n as in :func:`law_probabilities`.

    Returns
    -------
    np.ndarray
        (n,) float64: F(w) = E[1(<w, X> >= 0) X].
    """
    w = _weights(w)
    if w.ndim != 1 or dominance_margin(w) <= 0:
        raise ValueError("w must be one (n,) vector with |w_k| > sum_{i != k} |w_i| (dominance)")
    n, k = w.shape[0], int(np.argmax(np.abs(w)))
    return 0.5 * (product_moment(p, n, ()) + np.sign(w[k]) * product_moment(p, n, (k,)))


def balanced_closed_form(w: ArrayLike, p: ArrayLike) -> np.ndarray:
    """Return F for w with two non-zero entries of equal magnitude, w = c (s_i e_i + s_j e_j), c > 0.

    Parameters
    ----------
    w, p : ArrayLike
        One (n,) weight vector; a law on {-1, +1}^n as in :func:`law_probabilities`.

    Returns
    -------
    np.ndarray
        (n,) float64: F(w) = E[1(<w, X> >= 0) X].
    """
    w = _weights(w)
    i, j = _support(w, 2, "balanced_closed_form")
    if w.ndim != 1 or abs(w[i]) != abs(w[j]):
        raise ValueError(f"balanced_closed_form needs |w_i| = |w_j|, got {w[i]!r}, {w[j]!r}")
    n, si, sj = w.shape[0], np.sign(w[i]), np.sign(w[j])
    m = product_moment(p, n, ())
    inner = m - si * product_moment(p, n, (i,)) - sj * product_moment(p, n, (j,))
    return m - 0.25 * (inner + si * sj * product_moment(p, n, (i, j)))


def three_bump_closed_form(w: ArrayLike, p: ArrayLike) -> np.ndarray:
    """Return F for w with three non-zero entries (any signs and order): dominant, tie or majority regime.

    Parameters
    ----------
    w, p : ArrayLike
        One (n,) weight vector; a law on {-1, +1}^n as in :func:`law_probabilities`.

    Returns
    -------
    np.ndarray
        (n,) float64: F(w) = E[1(<w, X> >= 0) X].
    """
    w = _weights(w)
    idx = _support(w, 3, "three_bump_closed_form")
    if w.ndim != 1:
        raise ValueError(f"w must be one (n,) vector, got shape {w.shape}")
    n = w.shape[0]
    a, b, c = sorted(idx, key=lambda i: -abs(w[i]))
    s = {i: float(np.sign(w[i])) for i in idx}
    margin = abs(w[a]) - abs(w[b]) - abs(w[c])
    m = {S: product_moment(p, n, S) for r in range(4) for S in combinations((a, b, c), r)}
    if margin > 0:
        return dominant_closed_form(w, p)
    if margin < 0:  # strict triangle inequalities: sign<w, x> = majority of s * x
        lin = s[a] * m[(a,)] + s[b] * m[(b,)] + s[c] * m[(c,)]
        return 0.5 * m[()] + 0.25 * (lin - s[a] * s[b] * s[c] * m[(a, b, c)])
    # |w_a| = |w_b| + |w_c|: add E[1(y_a = -1) 1(y_b = 1) 1(y_c = 1) X], y = s * x, expanded
    extra = np.zeros(n)
    for r in range(4):
        for S in combinations((a, b, c), r):
            extra += np.prod([(-s[i] if i == a else s[i]) for i in S]) * m[S]
    return dominant_closed_form(np.where(np.arange(n) == a, w, 0.0), p) + extra / 8


def separation_gap(w: ArrayLike, k: int) -> tuple[float, float]:
    r"""(delta, tail) for the split after the k largest :math:`|w_i|` (notes 002 Eq. (13)).

    :math:`\delta = \min_{x\in\{\pm1\}^k}|\sum_{i\le k} w_{(i)}x_i|` over the head, tail = sum of the
    other :math:`|w_i|`.
    If tail < delta then 1(<w, x> >= 0) = 1(<w_head, x> >= 0) for every vertex x.

    Parameters
    ----------
    w : ArrayLike
        (n,) weights.
    k : int
        Size of the head, 1 <= k <= n.

    Returns
    -------
    tuple[float, float]
        ``(delta, tail)``.
    """
    w = _weights(w)
    if w.ndim != 1:
        raise ValueError(f"w must be one (n,) vector, got shape {w.shape}")
    n = w.shape[0]
    k = v.integer("k", k, 1)
    if k > n:
        raise ValueError(f"k must be <= n = {n}, got {k}")
    order = np.argsort(-np.abs(w), kind="stable")
    head, tail = w[order[:k]], w[order[k:]]
    return float(np.abs(vertices(k) @ head).min()), float(np.abs(tail).sum())
