r"""The hypercube chapter's back-end: Monte Carlo laws of :math:`\operatorname{sign}Z` on small rings.

The NLGP at :math:`g\to\infty` is :math:`X=\operatorname{sign}Z`, :math:`Z\sim\mathcal N(0,C(\xi))` with the
ring covariance of :mod:`localization.data.spectral`. Its law on :math:`\{-1,+1\}^n` is a closed form only
for :math:`n\le3` (:func:`localization.theory.hypercube_laws.nlgp_limit_law`, Sheppard's formula); for larger
:math:`n` it is estimated here by sampling :math:`Z`:

* :func:`nlgp_limit_law_mc` — the plain frequencies with their binomial standard errors;
* :func:`sign_gaussian_ring_law` — the frequencies averaged over the 4n ring symmetries;
* :func:`task_laws` — the two class laws of a hypercube task (exact for Ising, Monte Carlo for NLGP),
  the input of :mod:`localization.theory.hypercube_flow`;
* :func:`endpoint_census` and :func:`settled_shape` — which fixed point of the reduced flow the
  flow's and SGD's endpoints lead to, and how the settled SGD endpoints compare with the localized one;
* :func:`draw_argmax_fractions`, :func:`draw_flow_fields` — the chapter's figures.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from localization import prng
from localization import validation as v
from localization.data.spectral import covariance_sqrt
from localization.theory import hypercube_flow, hypercube_laws

__all__ = [
    "FAMILIES",
    "nlgp_limit_law_mc",
    "sign_gaussian_ring_law",
    "task_laws",
    "EndpointCensus",
    "endpoint_census",
    "SettledShape",
    "settled_shape",
]

#: The task families with a hypercube law: exact Ising rings and the NLGP's g -> inf limit.
FAMILIES = ("Ising", "NLGP")


def _sign_counts(key: jax.Array, xi: float, n: int, num: int, min_n: int, max_n: int) -> tuple[np.ndarray, int, int]:
    """(2^n,) counts of the vertex sign(Z) over ``num`` draws, the number of draws and n."""
    n = v.integer("n", n, min_n)
    if n > max_n:
        raise ValueError(f"n must be <= {max_n} (exact enumeration of 2^n vertices), got {n}")
    key = v.key("key", key)
    num = v.integer("num", num, 2)
    z = np.asarray(prng.flat_normal(key, (num, n), jnp.float64)) @ np.asarray(covariance_sqrt(xi, n)).T
    index = ((z < 0).astype(np.int64) << np.arange(n)[None, :]).sum(axis=1)
    return np.bincount(index, minlength=2**n).astype(np.float64), num, n


def nlgp_limit_law_mc(key: jax.Array, xi: float, n: int, num: int = 1_000_000) -> tuple[np.ndarray, np.ndarray]:
    """Monte Carlo law of sign(Z), Z ~ N(0, C(xi)) on the ring of n <= 6 sites.

    Parameters
    ----------
    key : JAX PRNG key of the draws.
    xi : length-scale of the ring covariance C(xi) (``data.spectral.covariance``), > 0.
    n : number of sites, 2 <= n <= 6.
    num : number of draws, >= 2.

    Returns
    -------
    (probabilities, standard_errors) : both (2^n,) float64; the standard error of each frequency is the
        binomial sqrt(p (1 - p) / num) at the estimate.
    """
    counts, num, _ = _sign_counts(key, xi, n, num, 1, 6)
    prob = counts / num
    return prob, np.sqrt(prob * (1 - prob) / num)


def sign_gaussian_ring_law(key: jax.Array, xi: float, n: int, num: int = 2_000_000) -> np.ndarray:
    r"""Monte Carlo law of :math:`\operatorname{sign}Z`, :math:`Z\sim\mathcal N(0,C(\xi))`, symmetrised.

    The frequencies on a ring of ``n`` <= 16 sites (the NLGP of ``data.spectral`` at :math:`g\to\infty`)
    are averaged over the 4n ring symmetries (``theory.hypercube_flow.ring_symmetry_images``), which the
    exact law has; every vertex keeps a positive weight only if it was drawn in some symmetric image (the
    law is otherwise unbiased).

    Parameters
    ----------
    key : JAX PRNG key of the draws.
    xi : length-scale of the ring covariance, > 0.
    n : number of sites, 2 <= n <= 16.
    num : number of draws, >= 2.

    Returns
    -------
    (2^n,) float64 probabilities summing to 1.
    """
    counts, _, n = _sign_counts(key, xi, n, num, 2, hypercube_laws.MAX_DIMENSION)
    sym = np.zeros(counts.size)
    for g in hypercube_flow.ring_symmetry_images(n):  # p_sym(x) = mean_g p(g x)
        sym += counts[g]
    return sym / sym.sum()


def task_laws(
    family: str,
    param: float,
    n: int,
    *,
    xi: tuple[float, float] = (1.0, 3.0),
    key: jax.Array | None = None,
    num: int = 2_000_000,
) -> hypercube_flow.HypercubeTask:
    r"""Build the hypercube counterpart of ``data.family_task(family, param, xi)`` on a ring of ``n`` sites.

    Parameters
    ----------
    family : ``"Ising"``: exact ring laws with couplings (0.3, ``param``); ``"NLGP"``: the
        :math:`g\to\infty` limit, :func:`sign_gaussian_ring_law` at ``xi = (xi0, xi1)``.
    param : the coupling J1 > 0.3 for Ising; for NLGP the finite gain of the SGD task, which does not
        enter.
    n : number of sites.
    xi : (xi0, xi1) with xi1 > xi0 (NLGP only; label 1 has the longer length-scale).
    key : JAX PRNG key of the NLGP draws (keyword-only: the exact Ising laws need none).
    num : draws per class (NLGP only).

    Returns
    -------
    :class:`~localization.theory.hypercube_flow.HypercubeTask`.
    """
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    param = v.real_scalar("param", param)
    n = v.integer("n", n, 2)
    if family == "Ising":
        if not param > 0.3:
            raise ValueError(f"param (J1) must be > J0 = 0.3 for Ising, got {param}")
        laws = hypercube_laws.ising_ring_law(0.3, n), hypercube_laws.ising_ring_law(param, n)
        return hypercube_flow.HypercubeTask.of(*laws, n)
    if key is None:
        raise ValueError("key must be a JAX PRNG key for family 'NLGP' (its law is estimated by Monte Carlo)")
    xi0, xi1 = (v.positive("xi", x) for x in xi)
    if not xi1 > xi0:
        raise ValueError(f"xi must be (xi0, xi1) with xi1 > xi0 (label 1 has the longer length-scale), got {xi}")
    k0, k1 = jax.random.split(v.key("key", key))
    return hypercube_flow.HypercubeTask.of(
        sign_gaussian_ring_law(k0, xi0, n, num), sign_gaussian_ring_law(k1, xi1, n, num), n
    )


# -------------------------------------------------------------------------------------------------
# The reduced flow against SGD: which fixed point each endpoint leads to
# -------------------------------------------------------------------------------------------------


class EndpointCensus(NamedTuple):
    r"""The fixed points of the reduced flow reached from one task's runs (:func:`endpoint_census`).

    Attributes
    ----------
    w_loc : (n,) the localized fixed point, the iteration :math:`w\leftarrow A(w)^{-1}c(w)` from
        :math:`e_0`; ``loc_converged`` whether it converged.
    loc_residual : the largest :math:`|\dot w|` of the flow at ``w_loc`` (0 to round-off if converged).
    tail : the largest entry of ``w_loc`` more than 3 sites from its peak, over the peak.
    tie : :math:`\min_x|\langle w_{\mathrm{loc}},x\rangle|` over the vertices (0 on a tie).
    s_half_min_eig : the smallest eigenvalue of :math:`\tfrac12(\Sigma_0+\Sigma_1)`.
    stability : the largest :math:`|A(w)-\tfrac12(\Sigma_0+\Sigma_1)|` over ``w_loc`` and every
        tie-free fixed point reached from an endpoint (0 for sign-symmetric laws).
    converged, iterations : the converged iterations and the iterations run (1 + both run counts).
    sgd_residual : the largest :math:`|\dot w|` at the converged fixed points of the SGD endpoints
        (0 if there are none).
    flow_gap : the largest relative distance of a flow endpoint to its fixed point.
    loc_flow, loc_sgd : (R,) bool, the endpoints whose fixed point converged and is ``w_loc`` up to a
        shift of the ring and the sign.
    dist_sgd : (R,) the relative distance of each SGD endpoint to its fixed point.
    """

    w_loc: np.ndarray
    loc_converged: bool
    loc_residual: float
    tail: float
    tie: float
    s_half_min_eig: float
    stability: float
    converged: int
    iterations: int
    sgd_residual: float
    flow_gap: float
    loc_flow: np.ndarray
    loc_sgd: np.ndarray
    dist_sgd: np.ndarray


def endpoint_census(law: hypercube_flow.HypercubeTask, w_flow: ArrayLike, w_sgd: ArrayLike) -> EndpointCensus:
    r"""Iterate Eq. (hc-iterate) from :math:`e_0` and from every endpoint of the flow and of SGD.

    Parameters
    ----------
    law : the task's two class laws on :math:`\{-1,1\}^n` (:func:`task_laws`).
    w_flow : (R, n) endpoints of the reduced flow.
    w_sgd : (R', n) endpoints of SGD (any float dtype; taken in float64).

    Returns
    -------
    :class:`EndpointCensus`.
    """
    from localization import field_analysis

    if not isinstance(law, hypercube_flow.HypercubeTask):
        raise TypeError(f"law must be a hypercube_flow.HypercubeTask, got {type(law).__name__}")
    n = law.n
    w_flow = np.asarray(v.float_array("w_flow", w_flow, ndim_min=2, last_dim=n), np.float64)
    w_sgd = np.asarray(v.float_array("w_sgd", w_sgd, ndim_min=2, last_dim=n), np.float64)
    x = hypercube_laws.vertices(n)
    w_loc, conv = hypercube_flow.fixed_point(np.eye(n)[0], law)
    _, a_loc = hypercube_flow.flow_parts(w_loc, law)
    loc_residual = float(np.abs(np.asarray(hypercube_flow.flow(w_loc, law))).max())
    far = np.abs(np.roll(w_loc, n // 2 - int(np.argmax(np.abs(w_loc)))))[np.abs(np.arange(n) - n // 2) > 3]
    tail = far.max() / np.abs(w_loc).max()
    s_half = 0.5 * sum(x.T @ (np.asarray(p)[:, None] * x) for p in (law.p0, law.p1))
    stab = [np.abs(np.asarray(a_loc) - s_half).max()]
    fp_f, conv_f = hypercube_flow.fixed_point(w_flow, law)
    fp_s, conv_s = hypercube_flow.fixed_point(w_sgd, law)
    sgd_residual = 0.0
    if conv_s.any():
        sgd_residual = float(np.abs(np.asarray(hypercube_flow.flow(fp_s[conv_s], law))).max())
    for fp, cv in ((fp_f, conv_f), (fp_s, conv_s)):  # every tie-free fixed point reached
        tie_free = cv & (np.abs(fp @ x.T).min(-1) > 1e-9)
        if tie_free.any():
            a_fp = np.asarray(hypercube_flow.flow_parts(fp[tie_free], law)[1])
            stab.append(np.abs(a_fp - s_half).max())
    flow_gap = (np.linalg.norm(fp_f - w_flow, axis=1) / np.linalg.norm(fp_f, axis=1)).max()

    def at_loc(fp):  # equal to w_loc up to a shift and the sign
        corr = [field_analysis.aligned_correlation(np.broadcast_to(s * w_loc, fp.shape), fp)[0] for s in (1, -1)]
        return np.maximum(*corr) > 1 - 1e-9

    return EndpointCensus(
        w_loc=w_loc,
        loc_converged=bool(conv),
        loc_residual=loc_residual,
        tail=float(tail),
        tie=float(np.abs(x @ w_loc).min()),
        s_half_min_eig=float(np.linalg.eigvalsh(s_half).min()),
        stability=float(max(stab)),
        converged=int(conv) + int(conv_f.sum()) + int(conv_s.sum()),
        iterations=1 + len(w_flow) + len(w_sgd),
        sgd_residual=sgd_residual,
        flow_gap=float(flow_gap),
        loc_flow=at_loc(fp_f) & conv_f,
        loc_sgd=at_loc(fp_s) & conv_s,
        dist_sgd=np.linalg.norm(fp_s - w_sgd, axis=1) / np.linalg.norm(fp_s, axis=1),
    )


class SettledShape(NamedTuple):
    r"""How the settled SGD endpoints of one task compare with its localized fixed point (:func:`settled_shape`).

    Attributes
    ----------
    corr_min : the smallest aligned correlation with ``w_loc`` of a settled endpoint.
    ipr_gap : the largest absolute difference between the IPR of a settled endpoint and w_loc's.
    sign_bad : the number of (endpoint, site) pairs, on the sites where :math:`|w_{\mathrm{loc}}|` is at
        least 5 % of its peak, where an aligned settled endpoint has the other sign.
    peaks : the runs whose flow and SGD endpoints peak on the same site.
    other_flow, other_sgd : the flow and SGD endpoints that do not lead to ``w_loc``.
    other_narrow : the flow endpoints not at ``w_loc`` whose IPR is not at least 0.2 below w_loc's.
    """

    corr_min: float
    ipr_gap: float
    sign_bad: int
    peaks: int
    other_flow: int
    other_sgd: int
    other_narrow: int


def settled_shape(census: EndpointCensus, w_flow: ArrayLike, w_sgd: ArrayLike, *, near: float = 0.06) -> SettledShape:
    """Compare the SGD endpoints that settled on ``census.w_loc`` with it: shape, width, signs, peak site.

    An endpoint is settled when it leads to ``w_loc`` (``census.loc_sgd``) and lies within ``near``
    (relative) of its fixed point. Each is signed so that its peak has the sign of w_loc's peak and
    rolled by the shift of ``field_analysis.aligned_correlation``.

    Parameters
    ----------
    census : the task's :func:`endpoint_census` (from the same endpoints).
    w_flow : (R, n) endpoints of the reduced flow.
    w_sgd : (R, n) endpoints of SGD from the same initialisations (at least one settled).
    near : the relative distance within which an endpoint counts as settled, > 0.

    Returns
    -------
    :class:`SettledShape`.
    """
    from localization import field_analysis, metrics

    if not isinstance(census, EndpointCensus):
        raise TypeError(f"census must be an EndpointCensus, got {type(census).__name__}")
    n = census.w_loc.size
    w_flow = np.asarray(v.float_array("w_flow", w_flow, ndim_min=2, last_dim=n), np.float64)
    ws = np.asarray(v.float_array("w_sgd", w_sgd, ndim_min=2, last_dim=n), np.float64)
    near = v.positive("near", near)
    w_loc = census.w_loc
    keep = census.loc_sgd & (census.dist_sgd < near)
    if not keep.any():
        raise ValueError(f"no SGD endpoint settled on w_loc within near = {near}: nothing to compare")
    orient = np.sign(ws[np.arange(len(ws)), np.argmax(np.abs(ws), axis=1)])[:, None] * np.sign(
        w_loc[np.argmax(np.abs(w_loc))]
    )
    corr, shift = field_analysis.aligned_correlation(np.broadcast_to(w_loc, ws.shape), orient * ws)
    aligned = np.stack([np.roll(o * w, s) for o, w, s in zip(orient, ws, shift, strict=True)])
    support = np.abs(w_loc) >= 0.05 * np.abs(w_loc).max()
    stray = ~census.loc_flow
    return SettledShape(
        corr_min=float(corr[keep].min()),
        ipr_gap=float(np.abs(np.asarray(metrics.ipr(ws[keep])) - float(metrics.ipr(w_loc))).max()),
        sign_bad=int(np.sum(np.sign(aligned[keep][:, support]) != np.sign(w_loc[support]))),
        peaks=int(field_analysis.peak_agreement(w_flow, ws, tol=0).count_exact),
        other_flow=int(stray.sum()),
        other_sgd=int((~census.loc_sgd).sum()),
        other_narrow=int(np.sum(np.asarray(metrics.ipr(w_flow))[stray] >= float(metrics.ipr(w_loc)) - 0.2)),
    )


# -------------------------------------------------------------------------------------------------
# The chapter's figures (drawing only)
# -------------------------------------------------------------------------------------------------
