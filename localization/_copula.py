"""Exact covariance of a Gaussian-copula coordinate pair: E[h(Z1) h(Z2)], corr(Z1, Z2) = c.

Used for Kur(k) (and checked against the NLGP closed form). ``h`` is odd and smooth on each side
of 0 (it may be non-analytic at 0 and grow like exp(z^2/(2k)) in the tails).

Method. Write Z1 = a U + b V, Z2 = a U - b V with a = sqrt((1+c)/2), b = sqrt((1-c)/2) and
(U, V) = r (cos t, sin t) iid N(0, 1). Then

    E[h(Z1) h(Z2)] = (1/pi) int_0^pi dt int_0^1 dp  h(r (a cos t + b sin t)) h(r (a cos t - b sin t)),

with r = sqrt(-2 log p) (p = exp(-r^2/2) is uniform), using that the integrand is invariant under
(U, V) -> -(U, V) (h odd). The only non-smooth points are the rays where an argument vanishes,
t = atan(a/b) and t = pi - atan(a/b): the angular integral is split there, and every piece and the
radial integral use tanh-sinh rules, which converge double-exponentially despite the algebraic
endpoint singularities (|z|^(k+1) at z = 0, p^(-2/k) growth at p -> 0).
"""

from __future__ import annotations

import math

import numpy as np

from ._marginals import tanh_sinh

__all__ = ["copula_covariance"]


def copula_covariance(h, c: float, *, order: int = 160, variance: float | None = None) -> float:
    """E[h(Z1) h(Z2)] for standard normals with correlation ``c`` in [-1, 1] (numpy ``h``)."""
    c = float(c)
    if c == 0.0:
        return 0.0
    if c == 1.0 and variance is not None:
        return float(variance)
    if c == -1.0 and variance is not None:
        return -float(variance)
    a = math.sqrt(0.5 * (1.0 + c))
    b = math.sqrt(0.5 * (1.0 - c))
    # radial rule: p in (0, 1); r = sqrt(-2 log p), with p near 1 written as 1 - q
    dl, dr, wr = tanh_sinh(0.0, 1.0, order)
    small = dl < 0.5
    logp = np.where(small, np.log(np.where(small, dl, 1.0)), np.log1p(-np.where(small, 0.0, dr)))
    r = np.sqrt(-2.0 * logp)
    keep = wr > 0
    r, wr = r[keep], wr[keep]
    t1 = math.atan2(a, b)  # a cos t - b sin t = 0
    t2 = math.pi - t1  # a cos t + b sin t = 0
    edges = sorted({0.0, t1, t2, math.pi})
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        if hi - lo <= 0:
            continue
        tl, tr, wt = tanh_sinh(lo, hi, order)
        t = np.where(tl <= tr, lo + tl, hi - tr)
        k2 = wt > 0
        t, wt = t[k2], wt[k2]
        u = a * np.cos(t)
        v = b * np.sin(t)
        z1 = r[:, None] * (u + v)[None, :]
        z2 = r[:, None] * (u - v)[None, :]
        f = h(z1) * h(z2)
        total += float(np.sum(wr[:, None] * wt[None, :] * f))
    return total / math.pi
