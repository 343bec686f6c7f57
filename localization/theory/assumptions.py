r"""Measuring the analytical simplifications A1–A3 of paper §3.1 (used by Lemma 3.1).

With :math:`\sigma_i` the i-th row of the class covariance :math:`\Sigma` and unit marginal variance:

* **A1** :math:`\mathbb E[X\mid X_i=x]=x\,\sigma_i` (conditional mean linear in x);
* **A2** :math:`\operatorname{Cov}[X\mid X_i=x]=\Sigma-\sigma_i\sigma_i^\top` (independent of x);
* **A3** Lindeberg's condition for :math:`w_1X_1,\dots,w_NX_N` (no single term dominates).

(For a general variance :math:`\sigma^2` the consistent statements are :math:`x\sigma_i/\sigma^2` and
:math:`\Sigma-\sigma_i\sigma_i^\top/\sigma^2`: as printed, A1 at j = i says :math:`x=x\sigma^2`, so the paper's
A1/A2 silently assume :math:`\sigma^2=1`. The functions below use the general form.)

Discrepancies returned here (0 when the assumption holds exactly):

``A1``  :math:`D_1^2=\sum_{j\ne i}\mathbb E\bigl[(m_j(X_i)-c_jX_i)^2\bigr]\big/\sum_{j\ne i}\mathbb E[m_j(X_i)^2]`,
    :math:`m_j(x)=\mathbb E[X_j\mid X_i=x]`, :math:`c_j=\Sigma_{ij}/\Sigma_{ii}`. Since
    :math:`\mathbb E[X_im_j(X_i)]=\Sigma_{ij}`, :math:`c_jX_i` is the L2 projection of :math:`m_j` on the
    linear functions, so :math:`D_1\in[0,1]` is the fraction (in L2 norm) of the conditional-mean curve
    that A1 misses.

``A2``  for a weight vector w (entry i excluded, it is fixed by the conditioning):
    :math:`D_2=\sqrt{\mathbb E_x[(v(x)-v_{A2})^2]}\,/\,v_{A2}`,
    :math:`v(x)=\operatorname{Var}(\langle w,X\rangle\mid X_i=x)`,
    :math:`v_{A2}=w^\top(\Sigma-\sigma_i\sigma_i^\top/\Sigma_{ii})w`.

``A3``  the Lindeberg-type ratio :math:`\max_jw_j^2\Sigma_{jj}/w^\top\Sigma w` (small for spread-out
    weights, = 1 for :math:`w\propto e_j`, above 1 when terms cancel; bounds in :func:`lindeberg_ratio`).

Exact cases (proved in the docstrings, used as fast paths): Gaussian data satisfy A1, A2 exactly; so
does every sign-symmetric law with ±s-valued coordinates (Ising): :math:`m_j` is an odd function on
{−s, s}, hence linear, and :math:`\mathbb E[X_jX_k\mid X_i=\pm s]` is the same for both signs (the
sign flip maps one conditional law to the other), so it equals :math:`\mathbb E[X_jX_k]`.

Gaussian-copula models (NLGP, Kur: :math:`X_j=h(Z_j)`, :math:`Z\sim\mathcal N(0,R)`, R unit diagonal) are
measured by quadrature (A1: composite Gauss–Legendre over :math:`Z_i`, inner 1-D Gauss–Hermite or a
closed form; never sampling); their A2 needs *exact conditional* Monte Carlo (at quadrature nodes
:math:`z`, :math:`Z_{-i}\mid Z_i=z` is sampled exactly), which is in
:mod:`localization.experiments.amplifier` (``a2_discrepancy``; it uses :func:`holds_exactly` and
:func:`normal_rule_hermite` from here). The model-agnostic binned estimators from given samples are
:mod:`localization.theory.binned_discrepancies`; exact values are given here
for laws with finitely many atoms (:func:`discrepancies_finite`, e.g. the single pulse, whose 2N
starts × lengths × signs can be listed).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from localization import data
from localization import validation as v
from localization.trajectory import Trajectory

__all__ = [
    "GaussianCopula",
    "gaussian_copula",
    "a1_discrepancy",
    "a1_discrepancy_copula",
    "holds_exactly",
    "normal_rule_hermite",
    "discrepancies_finite",
    "lindeberg_ratio",
    "a3_along_trajectory",
]


class GaussianCopula(NamedTuple):
    r"""A model :math:`X_j=h(Z_j)`, :math:`Z\sim\mathcal N(0,R)` with unit-diagonal R.

    ``transform``: vectorised NumPy function h (latent → data, unit-variance output);
    ``latent``: (N, N) latent correlation R; ``conditional_mean``: optional closed form
    ``(mu, s) -> E[h(mu + s U)]``, U ~ N(0,1), broadcasting; ``None`` → Gauss–Hermite.
    """

    transform: Callable
    latent: np.ndarray
    conditional_mean: Callable | None = None


# -------------------------------------------------------------------------------------------------
# quadrature rules for N(0, 1)
# -------------------------------------------------------------------------------------------------
def _normal_rule_legendre(panels=240, per_panel=10, zmax=12.0):
    """Composite Gauss–Legendre on [-zmax, zmax] against the N(0,1) density (panel edge at 0)."""
    x, w = np.polynomial.legendre.leggauss(per_panel)
    edges = np.linspace(-zmax, zmax, panels + 1)
    half = np.diff(edges)[:, None] / 2
    mid = (edges[:-1] + edges[1:])[:, None] / 2
    nodes = (mid + half * x).ravel()
    weights = (half * w).ravel() * np.exp(-(nodes**2) / 2) / math.sqrt(2 * math.pi)
    return nodes, weights


def normal_rule_hermite(order: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Hermite nodes and weights of ``order`` points against the N(0, 1) density (weights sum to 1)."""
    x, w = np.polynomial.hermite_e.hermegauss(order)
    return x, w / math.sqrt(2 * math.pi)


# -------------------------------------------------------------------------------------------------
# adapters for localization.data models
# -------------------------------------------------------------------------------------------------
def gaussian_copula(model: data.CopulaModel, n: int | tuple[int, ...]) -> GaussianCopula:
    """Return the Gaussian-copula representation of a ``localization.data`` copula model (Gaussian, NLGP, Kur).

    ``TypeError`` for models that are not Gaussian copulas.

    Parameters
    ----------
    model, n : data.CopulaModel, int or tuple[int, ...]
        The model; the input size (int or grid tuple).

    Returns
    -------
    GaussianCopula
        Its map h, latent correlation R (N, N) and closed-form conditional mean (or None).
    """
    shape = v.shape("n", n)
    if not isinstance(model, data.CopulaModel):
        raise TypeError(f"model must be a Gaussian-copula data model (Gaussian, NLGP, Kur), got {type(model).__name__}")
    return GaussianCopula(model.transform, model.latent_covariance(shape), model.smoothed_transform)


def holds_exactly(model: data.DataModel) -> bool:
    """Tell whether A1 and A2 hold exactly, by a theorem rather than a computation.

    They do for jointly Gaussian data (conditional means are linear), or when every coordinate is
    ±s-valued with probability ½ each (Ising, SinglePulse: any odd function of a ±s variable is linear
    in it).

    Parameters
    ----------
    model : data.DataModel
        A ``localization.data`` model.

    Returns
    -------
    bool
        True when A1 and A2 hold exactly.
    """
    if not isinstance(model, data.DataModel):
        raise TypeError(f"model must be a localization.data model, got {type(model).__name__}")
    if isinstance(model, (data.Gaussian, data.GaussianClone)):
        return True
    m = model.marginal
    if not m.is_discrete:
        return False
    x, p = (np.asarray(t, dtype=np.float64) for t in m.quadrature())
    x, p = x[p > 0], p[p > 0]
    return x.size == 2 and np.isclose(x[0], -x[1]) and np.allclose(p, 0.5)


# -------------------------------------------------------------------------------------------------
# A1
# -------------------------------------------------------------------------------------------------
def a1_discrepancy_copula(copula: GaussianCopula, i: int = 0, *, hermite_order: int = 120) -> float:
    r"""Return the A1 discrepancy :math:`D_1` (module docstring) of a Gaussian-copula model, by quadrature.

    :math:`m_j(h(z))=\mathbb E[h(\rho_jz+\sqrt{1-\rho_j^2}\,U)]`, :math:`\rho_j=R_{ij}`; the outer
    expectation over :math:`Z_i` uses composite Gauss–Legendre (2400 nodes on [-12, 12], resolving the
    near-step of NLGP at large gain). Accuracy ~1e-8 absolute for the models of the book.

    Parameters
    ----------
    copula : GaussianCopula
        The model (:func:`gaussian_copula`).
    i : int
        The conditioning coordinate.
    hermite_order : int
        Gauss–Hermite nodes of the inner expectations (used when the copula has no closed-form
        ``conditional_mean``), >= 2.

    Returns
    -------
    float
        :math:`D_1`.
    """
    R = np.asarray(copula.latent, dtype=np.float64)
    i = v.integer("i", i, minimum=0, maximum=R.shape[0] - 1)
    hermite_order = v.integer("hermite_order", hermite_order, minimum=2)
    rho = np.delete(R[i], i)
    s = np.sqrt(np.clip(1 - rho**2, 0.0, None))
    z, wz = _normal_rule_legendre()
    hz = copula.transform(z)  # X_i at the nodes, (Q,)
    mu = z[:, None] * rho[None, :]  # (Q, N-1)
    if copula.conditional_mean is not None:
        m = copula.conditional_mean(mu, s[None, :])
    else:
        u, wu = normal_rule_hermite(hermite_order)
        m = np.einsum("qjk,k->qj", copula.transform(mu[..., None] + s[None, :, None] * u), wu)
    ex2 = wz @ hz**2
    c = (wz * hz) @ m / ex2  # Σ_ij / Σ_ii, computed with the same rule
    resid = np.sum(wz @ (m - hz[:, None] * c[None, :]) ** 2)
    total = np.sum(wz @ m**2)
    return float(np.sqrt(max(resid, 0.0) / total)) if total > 0 else 0.0


def a1_discrepancy(model: data.DataModel, n: int | tuple[int, ...], i: int = 0) -> float:
    r"""Return the A1 discrepancy :math:`D_1\in[0,1]` of a ``localization.data`` model on inputs of size ``n``.

    Exact 0 for Gaussian data and for ±s-valued sign-symmetric models (Ising); quadrature
    (:func:`a1_discrepancy_copula`) for NLGP and Kur. Other models: ``TypeError`` — use
    :func:`localization.theory.binned_discrepancies.a1_discrepancy_samples`.

    Caveat (saturating NLGP): this is the *literal* A1, conditioning on the exact value of
    :math:`X_i`. For large gain, :math:`X_i=\operatorname{erf}(gZ_i)/\mathcal Z` equals ±1/𝒵 to within
    rounding for most :math:`Z_i` while :math:`\mathbb E[X_j\mid Z_i]` still varies with :math:`Z_i`, so the
    literal D₁ is large (≈0.49 at g = 100, ξ = 2, N = 16) although the coarse-grained statement that
    enters the gradient (:math:`X_i` ≈ its sign) nearly holds; the binned sample estimate, which cannot
    resolve saturated values, gives ≈0.11 there.

    Parameters
    ----------
    model : data.DataModel
        A ``localization.data`` model.
    n : int or tuple[int, ...]
        Input size.
    i : int
        The conditioning coordinate.

    Returns
    -------
    float
        :math:`D_1`.
    """
    if holds_exactly(model):
        v.shape("n", n)
        return 0.0
    return a1_discrepancy_copula(gaussian_copula(model, n), i)


# -------------------------------------------------------------------------------------------------
# A1 and A2 exactly, for a law with finitely many atoms
# -------------------------------------------------------------------------------------------------
def discrepancies_finite(support: ArrayLike, prob: ArrayLike, w: ArrayLike, i: int = 0) -> tuple[float, float]:
    r"""Return the exact :math:`(D_1, D_2)` (module docstring) of a law with finitely many atoms, for weights ``w``.

    Every expectation is a finite sum, so the result has
    no sampling or binning error: the conditional mean and variance given :math:`X_i=x` are computed
    for each distinct value x of coordinate i. The law is centred first (like the sample
    estimators). ``ValueError`` when :math:`X_i` or the A2 variance :math:`v_{A2}` is degenerate (zero).

    Parameters
    ----------
    support : ArrayLike
        (M, N) atoms.
    prob : ArrayLike
        (M,) probabilities (non-negative, summing to 1 within 1e-12; repeated atoms are allowed).
    w : ArrayLike
        (N,) weights.
    i : int
        The conditioning coordinate.

    Returns
    -------
    tuple[float, float]
        :math:`(D_1, D_2)` as Python floats.
    """
    support = np.asarray(v.float_array("support", support, ndim_min=2), dtype=np.float64)
    if support.ndim != 2 or support.shape[0] < 2:
        raise ValueError(f"support must have shape (M, N) with M >= 2 atoms, got {support.shape}")
    M, N = support.shape
    prob = np.asarray(v.float_array("prob", prob, ndim_min=1), dtype=np.float64)
    if prob.shape != (M,):
        raise ValueError(f"prob must have shape ({M},) (one probability per atom), got {prob.shape}")
    if not (np.all(np.isfinite(support)) and np.all(np.isfinite(prob))):
        raise ValueError("support and prob must be finite")
    if np.any(prob < 0) or abs(prob.sum() - 1.0) > 1e-12:
        raise ValueError(f"prob must be non-negative and sum to 1 (within 1e-12), got sum {prob.sum()!r}")
    w = np.asarray(v.float_array("w", w, ndim_min=1, last_dim=N), dtype=np.float64)
    if w.ndim != 1:
        raise ValueError(f"w must be a single weight vector of shape ({N},), got {w.shape}")
    i = v.integer("i", i, minimum=0, maximum=N - 1)
    x = support - prob @ support
    cov = x.T @ (prob[:, None] * x)
    if not cov[i, i] > 0:
        raise ValueError(f"coordinate i = {i} is constant under the law (variance 0)")
    c = cov[i] / cov[i, i]
    wk = w.copy()
    wk[i] = 0.0
    v_a2 = wk @ (cov - np.outer(cov[i], cov[i]) / cov[i, i]) @ wk
    if not v_a2 > 0:
        raise ValueError("w must give a positive A2 variance v_A2 (non-zero weight off coordinate i)")
    others = np.arange(N) != i
    proj = x @ wk
    resid = total = spread = 0.0
    for value in np.unique(x[:, i]):
        atoms = x[:, i] == value
        p = prob[atoms]
        mass = p.sum()
        if mass == 0:
            continue
        m = p @ x[atoms] / mass  # E[X | X_i = value], (N,)
        resid += mass * np.sum((m[others] - c[others] * value) ** 2)
        total += mass * np.sum(m[others] ** 2)
        mean_proj = p @ proj[atoms] / mass
        spread += mass * (p @ (proj[atoms] - mean_proj) ** 2 / mass - v_a2) ** 2
    d1 = math.sqrt(resid / total) if total > 0 else 0.0
    return float(d1), float(math.sqrt(spread) / v_a2)


# -------------------------------------------------------------------------------------------------
# A3
# -------------------------------------------------------------------------------------------------
def lindeberg_ratio(weights: ArrayLike, cov: ArrayLike) -> jax.Array:
    r"""Return the A3 diagnostic :math:`\max_jw_j^2\Sigma_{jj}/w^\top\Sigma w` along the last axis.

    The variance of the largest single term
    :math:`w_jX_j` over the variance of the sum :math:`\langle w,X\rangle`. For unit diagonal
    :math:`\Sigma` (bounds from :math:`\lambda_{\min}|w|^2\le w^\top\Sigma w\le\lambda_{\max}|w|^2`
    and :math:`\max_jw_j^2\le|w|^2\le N\max_jw_j^2`):

    .. math::

        \frac{1}{N\lambda_{\max}(\Sigma)}\le\text{ratio}\le\frac{1}{\lambda_{\min}(\Sigma)} .

    * 1 for :math:`w\propto e_j` (one term carries all the variance, Lindeberg fails);
    * :math:`1/(N\lambda(0))` for a flat field :math:`w\propto\mathbf 1` of a circulant
      :math:`\Sigma` (row sum :math:`\lambda(0)`); with non-negative correlations
      :math:`\lambda(0)=\lambda_{\max}` (Perron–Frobenius), so the flat field attains the lower
      bound, which is :math:`1/N` only for :math:`\Sigma=I`;
    * above 1 when terms cancel: :math:`w=e_0-e_1` gives :math:`1/(2(1-\Sigma_{01}))`, more than 1
      as soon as :math:`\Sigma_{01}>1/2` (the sum then varies less than one of its terms).

    Parameters
    ----------
    weights : ArrayLike
        (..., N) weights.
    cov : ArrayLike
        (N, N) covariance Σ.

    Returns
    -------
    jax.Array
        (...) ratios.
    """
    cov = v.float64("cov", v.float_array("cov", cov, ndim_min=2))
    if cov.ndim != 2 or cov.shape[0] != cov.shape[1]:
        raise ValueError(f"cov must be a square (N, N) matrix, got shape {cov.shape}")
    w = v.float64("w", v.float_array("weights", weights, ndim_min=1, last_dim=cov.shape[0]))
    total = jnp.einsum("...i,ij,...j->...", w, cov, w)
    return jnp.max(w**2 * jnp.diag(cov), axis=-1) / total


def a3_along_trajectory(trajectory: Trajectory, cov: ArrayLike) -> jax.Array:
    """Return :func:`lindeberg_ratio` at every checkpoint of a ``Trajectory``.

    Parameters
    ----------
    trajectory : Trajectory
        A run with weights (..., C, N).
    cov : ArrayLike
        (N, N) covariance Σ.

    Returns
    -------
    jax.Array
        (..., C) ratios.
    """
    if not isinstance(trajectory, Trajectory):
        raise TypeError(f"trajectory must be a localization.train.Trajectory, got {type(trajectory).__name__}")
    return lindeberg_ratio(trajectory.weights, cov)
