r"""What the paper's theory predicts from one marginal: the sign rule, and φ of an empirical law.

The prediction of paper Claim 3.2 (from Lemma 3.1 and the corrected Lemma B.1): for a unit-variance
class-1 marginal, :math:`\varphi'''(0)=\sqrt{2/\pi}\,(3-\mathbb E[X^4])`, so a *sub-Gaussian* marginal
(excess kurtosis :math:`<0`) makes the amplifier super-linear near :math:`a=0` and the effective flow
localizes the field, a super-Gaussian one (:math:`>0`) does not. Given an interval for the excess
kurtosis, :func:`sign_rule` states that prediction or says that the interval straddles 0.

:func:`empirical_amplifier` evaluates paper Eq. (6) on the pooled law of given samples — the
definition applied to an array, not a measurement; the bootstrap that puts a band around it, and the
command that reads a user's data file, are :func:`localization.experiments.own_data.predict` and
``python -m localization predict``.

This is the paper's rule for :math:`N\to\infty`. At finite N the onset needs a margin below 0: the
book's chapter *The mechanism* finds that NLGP at N = 40 needs an excess kurtosis below about -0.33
before the flow's fields localize; a verdict "localizes" near 0 is therefore the asymptotic one. It is
also the rule of the paper's task, whose class 0 has shorter correlations than class 1: there the
linear part of the flow spreads the field unless φ is super-linear where the weights are (near 0).
When the two classes have equal covariances (data against their Gaussian clone) that linear part
cancels, and a φ super-linear only at large a (Kur(5): excess kurtosis +1.29) localizes too
(``experiments.own_data.train_on_samples``).

:func:`amplifier_terms` also returns the derivatives' moments that expand φ of a shifted and rescaled
law (the bootstrap's re-standardisation of each resample).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from localization import validation as v
from localization.data.marginals import GaussianMarginal

__all__ = [
    "LOCALIZES",
    "DOES_NOT_LOCALIZE",
    "UNDECIDED",
    "VERDICTS",
    "sign_rule",
    "amplifier_integrand",
    "amplifier_integrand_slope",
    "amplifier_integrand_core",
    "AmplifierTerms",
    "amplifier_terms",
    "empirical_amplifier",
    "gaussian_line",
]

#: The verdict when the whole interval lies below 0 (sub-Gaussian).
LOCALIZES = "localizes"
#: The verdict when the whole interval lies above 0 (super-Gaussian).
DOES_NOT_LOCALIZE = "does not localize"
#: The verdict when the interval contains 0.
UNDECIDED = "undecided"
#: The verdicts of :func:`sign_rule`.
VERDICTS = (LOCALIZES, DOES_NOT_LOCALIZE, UNDECIDED)


def sign_rule(low: float, high: float) -> str:
    r"""Return the paper's prediction from an interval [low, high] for the marginal's excess kurtosis.

    The :math:`N\to\infty` sign rule of Claim 3.2: ``"localizes"`` when the whole interval lies below
    0 (sub-Gaussian: :math:`\varphi'''(0)>0`, φ super-linear near 0), ``"does not localize"`` when it
    lies above 0, ``"undecided"`` when it contains 0 (the data do not fix the sign at this sample
    size). At finite N the onset needs a margin below 0 (NLGP at N = 40: below about -0.33).

    Parameters
    ----------
    low, high : float
        The interval's ends, finite, ``low <= high``.

    Returns
    -------
    str
        One of :data:`VERDICTS`.
    """
    low = v.real_scalar("low", low)
    high = v.real_scalar("high", high)
    if low > high:
        raise ValueError(f"low must be <= high (an interval), got low = {low} > high = {high}")
    if high < 0:
        return LOCALIZES
    if low > 0:
        return DOES_NOT_LOCALIZE
    return UNDECIDED


def _points(a: ArrayLike) -> np.ndarray:
    a = v.finite_real_array("a", a, valid="0 <= a < 1")
    if np.any(a < 0) or np.any(a >= 1):
        raise ValueError(f"a must lie in [0, 1) (phi is odd; a = 1 is the limit E|X|), got {a}")
    return a


def _scale(a: ArrayLike) -> jax.Array:
    """Return the factor c(a) = a / sqrt(2 (1 - a^2)) of Eq. (6)'s integrand x erf(c x)."""
    return a / jnp.sqrt(2.0 * (1.0 - a * a))


_flat_derivatives = jax.jit(lambda x, a: amplifier_integrand_core(x, a))


def _evaluate(x: ArrayLike, a: ArrayLike, order: int) -> np.ndarray:
    """Return the ``order``-th x-derivative of g_a at x and a (any shapes), of shape x.shape + a.shape."""
    x = v.finite_real_array("x", x)
    a = _points(a)
    values = _flat_derivatives(v.float64("x", x.ravel()), v.float64("a", a.ravel()))[order]
    return np.asarray(values, dtype=np.float64).reshape(x.shape + a.shape)


def amplifier_integrand(x: ArrayLike, a: ArrayLike) -> np.ndarray:
    r"""Return the integrand of paper Eq. (6), :math:`g_a(x)=x\,\operatorname{erf}\bigl(x a/\sqrt{2(1-a^2)}\bigr)`.

    φ(a) is its mean over the marginal; it is even in x, so a law and its mirror image have one φ.

    Parameters
    ----------
    x : ArrayLike
        Values of the marginal, any shape, finite.
    a : ArrayLike
        Points in [0, 1), any shape.

    Returns
    -------
    np.ndarray
        float64, shape ``x.shape + a.shape``.
    """
    return _evaluate(x, a, 0)


def amplifier_integrand_slope(x: ArrayLike, a: ArrayLike) -> np.ndarray:
    r"""Return :math:`g_a'(x)=\operatorname{erf}(cx)+\tfrac{2}{\sqrt\pi}\,cx\,e^{-c^2x^2}`, :math:`c=a/\sqrt{2(1-a^2)}`.

    How φ of a law responds to shifting or rescaling it: :math:`-\mathbb E[g_a'(X)]` and
    :math:`\mathbb E[X g_a'(X)]` are the derivatives of :math:`\mathbb E[g_a((X-m)t)]` in m and t at
    (0, 1).

    Parameters
    ----------
    x : ArrayLike
        Values, any shape, finite.
    a : ArrayLike
        Points in [0, 1), any shape.

    Returns
    -------
    np.ndarray
        float64, shape ``x.shape + a.shape``.
    """
    return _evaluate(x, a, 1)


class AmplifierTerms(NamedTuple):
    r"""Eq. (6)'s integrand and its derivatives averaged over samples (S, N) at points a (P,).

    See :func:`amplifier_terms`.

    Attributes
    ----------
    per_sample : np.ndarray, shape (S, P)
        :math:`\frac1N\sum_j g_a(x_{sj})`: φ of the pooled law is its mean over the samples.
    derivatives : np.ndarray, shape (2, 3, N, P)
        ``derivatives[d - 1, k, j]`` = :math:`\frac1S\sum_s x_{sj}^k\,g_a^{(d)}(x_{sj})` for the first and
        second derivatives d = 1, 2 and the powers k = 0, 1, 2, per coordinate j.
    """

    per_sample: np.ndarray
    derivatives: np.ndarray


def amplifier_integrand_core(x: jax.Array, a: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    r"""Return :math:`g_a`, :math:`g_a'` and :math:`g_a''` at ``x[..., None]`` and ``a`` without checks (jit-safe).

    :math:`g_a(x)=x\,\operatorname{erf}(cx)`, :math:`g_a'=\operatorname{erf}(cx)+cx\,\beta`,
    :math:`g_a''=2c\,\beta\,(1-c^2x^2)` with :math:`c=a/\sqrt{2(1-a^2)}` and
    :math:`\beta=\tfrac2{\sqrt\pi}e^{-c^2x^2}`. For use inside compiled code; the checked entry points
    are :func:`amplifier_integrand` and :func:`amplifier_integrand_slope`.

    Parameters
    ----------
    x : jax.Array
        Values, any shape (float64).
    a : jax.Array
        (P,) points in [0, 1) (float64).

    Returns
    -------
    tuple of jax.Array
        Three arrays of shape ``x.shape + (P,)``.
    """
    c = _scale(a)
    cx = x[..., None] * c
    erf = jax.scipy.special.erf(cx)
    bell = (2.0 / math.sqrt(math.pi)) * jnp.exp(-cx * cx)  # d erf(u)/du at u = cx
    return x[..., None] * erf, erf + cx * bell, 2.0 * c * bell * (1.0 - cx * cx)


@jax.jit
def _terms(x, a):
    g, slope, curvature = amplifier_integrand_core(x, a)
    powers = (jnp.ones_like(x), x, x * x)
    sums = [[(p[..., None] * d).sum(axis=0) for p in powers] for d in (slope, curvature)]
    return g.mean(axis=1), jnp.stack([jnp.stack(row) for row in sums])


#: Entries of (rows, N, P) evaluated at once by :func:`amplifier_terms` (memory bound, ~30 MB per array).
_BLOCK = 1 << 22


def amplifier_terms(samples: ArrayLike, a: ArrayLike) -> AmplifierTerms:
    r"""Return Eq. (6)'s integrand averaged per sample, and its derivatives' moments per coordinate.

    What φ of the pooled law of ``samples`` is made of, and the coefficients of its expansion when a
    coordinate is shifted by m and rescaled by t: with :math:`D_{dk}` = ``derivatives[d - 1, k]``,
    :math:`\mathbb E[g_a((X_j-m)t)]=\mathbb E[g_a(X_j)]+(t-1)D_{11,j}-mD_{10,j}
    +\tfrac12(t-1)^2D_{22,j}+\tfrac12m^2D_{20,j}-(t-1)m(D_{10,j}+D_{21,j})+\dots`

    Parameters
    ----------
    samples : ArrayLike
        (S, N) finite values.
    a : ArrayLike
        (P,) points in [0, 1).

    Returns
    -------
    AmplifierTerms
        ``per_sample`` (S, P) and ``derivatives`` (2, 3, N, P), float64.
    """
    z = v.finite_real_array("samples", samples)
    if z.ndim != 2 or z.size == 0:
        raise ValueError(f"samples must be a non-empty (S, N) array, got shape {z.shape}")
    a = _points(a)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"a must be a non-empty 1-D array (P points), got shape {a.shape}")
    S, N = z.shape
    rows = min(S, max(1, _BLOCK // (N * a.size)))
    # Every block has `rows` rows (one compilation): the last is padded with zero rows, which add
    # nothing to any sum but that of g_a''(0) = 4c/sqrt(pi), subtracted below.
    padded = np.zeros((-(-S // rows) * rows, N))
    padded[:S] = z
    av = v.float64("a", a)
    per_sample = np.empty((padded.shape[0], a.size))
    derivatives = np.zeros((2, 3, N, a.size))
    for start in range(0, padded.shape[0], rows):
        mean_g, sums = _terms(v.float64("samples", padded[start : start + rows]), av)
        per_sample[start : start + rows] = np.asarray(mean_g)
        derivatives += np.asarray(sums)
    derivatives[1, 0] -= (padded.shape[0] - S) * np.asarray(4.0 * _scale(av) / math.sqrt(math.pi))
    return AmplifierTerms(per_sample[:S], derivatives / S)


def empirical_amplifier(samples: ArrayLike, a: ArrayLike) -> np.ndarray:
    r"""Return φ(a) of paper Eq. (6) for the pooled law of ``samples``: the mean of :math:`g_a` over every entry.

    With standardised samples (every coordinate z-scored, e.g. ``EmpiricalModel.samples``) this is
    the amplifier of the pooled standardised marginal, the law :func:`sign_rule` speaks of; its
    deviation from the Gaussian line is ``empirical_amplifier(z, a) - gaussian_line(a)``.

    Parameters
    ----------
    samples : ArrayLike
        (S, N) finite values (S samples of N coordinates), pooled over both axes.
    a : ArrayLike
        (P,) points in [0, 1).

    Returns
    -------
    np.ndarray
        (P,) float64.
    """
    return amplifier_terms(samples, a).per_sample.mean(axis=0)


def gaussian_line(a: ArrayLike) -> np.ndarray:
    r"""Return :math:`\sqrt{2/\pi}\,a`, φ of every unit-variance Gaussian marginal (the linear reference)."""
    return GaussianMarginal.mean_absolute * _points(a)  # E|X| = sqrt(2/pi) for N(0, 1)
