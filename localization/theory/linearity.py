r"""φ against the linear reference :math:`\sqrt{2/\pi}\,a` (paper §3.2, App. B.1).

For unit variance the Gaussian amplifier is exactly :math:`\sqrt{2/\pi}\,a`; a marginal localizes
when its φ is super-linear. This module measures where φ lies above or below that line, and finds
the member of a family of marginals at which a statistic crosses a target:

* :func:`linear_deviation` — :math:`\varphi(a)-\sqrt{2/\pi}\,a`;
* :func:`linear_crossings` — the points of (0, 1) where φ crosses the line;
* :func:`family_root` — the parameter value at which a statistic of a family of marginals equals a
  target (e.g. the k of Kur(k) with zero excess kurtosis).

All three find roots of functions that can be evaluated anywhere, by Brent's method; a crossing of
*sampled* data (a simulated curve) is :func:`localization.metrics.first_crossing`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from jax.typing import ArrayLike
from scipy.optimize import brentq

from localization import validation as v
from localization.theory.amplifier import evaluate_amplifier

__all__ = [
    "linear_deviation",
    "linear_crossings",
    "family_root",
]

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def linear_deviation(phi: Callable, a: ArrayLike) -> np.ndarray:
    r"""Return :math:`\varphi(a)-\sqrt{2/\pi}\,a`: positive = super-linear, negative = sub-linear (paper §3.2).

    Parameters
    ----------
    phi : Callable
        A vectorised callable on [-1, 1] (e.g. ``theory.amplifier_of(marginal)``).
    a : ArrayLike
        Points in [-1, 1] (checked), any shape.

    Returns
    -------
    np.ndarray
        float64, the shape of ``a`` (at least 1-D).
    """
    if not callable(phi):
        raise TypeError(f"phi must be callable, got {type(phi).__name__}")
    a = np.asarray(v.float_array("a", np.atleast_1d(np.asarray(a, dtype=np.float64))), dtype=np.float64)
    if not np.all(np.isfinite(a)) or np.any(np.abs(a) > 1):
        raise ValueError("a must be finite and lie in [-1, 1]")
    return evaluate_amplifier(phi, a) - _SQRT_2_OVER_PI * a


def linear_crossings(phi: Callable, num: int = 2001, tol: float = 1e-12) -> np.ndarray:
    r"""Return the points :math:`a\in(0,1)` where φ crosses the linear reference :math:`\sqrt{2/\pi}\,a`.

    They are the sign changes of :func:`linear_deviation`.

    The deviation is evaluated on ``num`` equally spaced points of :math:`(0,1)` (endpoints excluded);
    each sign change is refined by bisection (``brentq``, absolute tolerance ``tol``). Since φ is odd,
    crossings in :math:`(-1,0)` are the negatives of these.

    Parameters
    ----------
    phi : Callable
        A vectorised callable on [-1, 1].
    num : int
        Grid points, >= 3.
    tol : float
        Absolute tolerance of each root, > 0.

    Returns
    -------
    np.ndarray
        Sorted 1-D float64 crossings (empty if φ − linear keeps one sign on the grid).
    """
    if not callable(phi):
        raise TypeError(f"phi must be callable, got {type(phi).__name__}")
    num = v.integer("num", num, minimum=3)
    tol = v.positive("tol", tol)
    grid = np.linspace(0.0, 1.0, num + 2)[1:-1]
    dev = linear_deviation(phi, grid)
    sign = np.sign(dev)

    def deviation_at(t: float) -> float:
        return float(linear_deviation(phi, t)[0])

    roots = [brentq(deviation_at, grid[k], grid[k + 1], xtol=tol) for k in np.nonzero(sign[:-1] * sign[1:] < 0)[0]]
    return np.asarray(roots, dtype=np.float64)


def family_root(
    make_marginal: Callable[[float], Any],
    statistic: Callable[[Any], float],
    bracket: tuple[float, float],
    target: float = 0.0,
    tol: float = 1e-12,
) -> float:
    r"""Return the parameter value p in ``bracket`` where ``statistic(make_marginal(p)) == target`` (Brent's method).

    Example: the k of Kur(k) with zero excess kurtosis is
    ``family_root(lambda k: data.Kur(1.0, k).marginal, lambda m: m.excess_kurtosis, (5, 7))``.
    ``statistic(...) - target`` must change sign over the bracket (``ValueError`` otherwise). The
    statistic is a function of p evaluated wherever Brent's method asks; for a level crossed by
    sampled values on a fixed grid use :func:`localization.metrics.first_crossing`.

    Parameters
    ----------
    make_marginal : Callable
        p -> a marginal (or any object ``statistic`` takes).
    statistic : Callable
        marginal -> float.
    bracket : tuple[float, float]
        ``(low, high)`` with low < high.
    target : float
        The level to reach.
    tol : float
        Absolute tolerance in p, > 0.

    Returns
    -------
    float
        The root p.
    """
    if not callable(make_marginal):
        raise TypeError(f"make_marginal must be callable, got {type(make_marginal).__name__}")
    if not callable(statistic):
        raise TypeError(f"statistic must be callable, got {type(statistic).__name__}")
    if not (isinstance(bracket, (tuple, list)) and len(bracket) == 2):
        raise ValueError(f"bracket must be a pair (low, high), got {bracket!r}")
    lo = v.real_scalar("bracket[0]", bracket[0])
    hi = v.real_scalar("bracket[1]", bracket[1])
    if not lo < hi:
        raise ValueError(f"bracket must satisfy low < high, got {bracket!r}")
    target = v.real_scalar("target", target)
    tol = v.positive("tol", tol)

    def f(p):
        return float(statistic(make_marginal(p))) - target

    flo, fhi = f(lo), f(hi)
    if not (math.isfinite(flo) and math.isfinite(fhi)) or flo * fhi > 0:
        raise ValueError(
            f"statistic - target must take finite values of opposite signs at the ends of bracket "
            f"{bracket!r}, got {flo!r} and {fhi!r}"
        )
    return brentq(f, lo, hi, xtol=tol)
