r"""The amplifier chapter's back-end: the A2 discrepancy of a data model by conditional Monte Carlo.

Assumption A2 of paper §3.1 says :math:`\operatorname{Cov}[X\mid X_i=x]=\Sigma-\sigma_i\sigma_i^\top` does not depend
on :math:`x`; its discrepancy :math:`D_2` is defined in :mod:`localization.theory.assumptions`, which also
computes A1 by quadrature, A2 exactly for laws with finitely many atoms, and A3. For Gaussian-copula models
(NLGP, Kur) the conditional variance of :math:`\langle w,X\rangle` has no closed form: at Gauss–Hermite
nodes :math:`z` of :math:`Z_i` the latent :math:`Z_{-i}\mid Z_i=z` is sampled exactly, and two independent
halves give an unbiased estimate of :math:`(v(z)-v_{A2})^2` (:func:`a2_discrepancy_copula`,
:func:`a2_discrepancy`).

It also holds the computations behind the chapter's checks, so that a check cell states its claims
and little else: the exact Ising gate probabilities and the Lindeberg cases of Step 3
(:func:`lattice_weights`, :func:`ising_gate`, :func:`binned_gate`, :func:`lindeberg_cases`), the
relative error of Lemma 3.1's final form (:func:`final_form_error`), the exact elliptical gated mean
against Monte Carlo (:func:`elliptical_errors`), the exact A1/A2 discrepancies of the ±1 models
(:func:`ising_discrepancies`, :func:`single_pulse_atoms`), the measured ones of the elliptical laws
(:func:`elliptical_discrepancies`), φ of a symmetric density by adaptive quadrature
(:func:`phi_of_density`), and two small table formatters (:func:`text_table`, :func:`md_table`).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from localization import data, metrics
from localization import validation as v
from localization.theory import amplifier as _amp
from localization.theory import assumptions as _assumptions
from localization.theory import batch_gradient as _bg
from localization.theory import binned_discrepancies as _binned
from localization.theory import exact_gated_mean as _eg
from localization.theory.assumptions import GaussianCopula, gaussian_copula, holds_exactly, normal_rule_hermite
from localization.theory.effective import amplifier_argument

__all__ = [
    "a2_discrepancy",
    "a2_discrepancy_copula",
    "lattice_weights",
    "ising_gate",
    "binned_gate",
    "lindeberg_cases",
    "final_form_error",
    "elliptical_errors",
    "ising_discrepancies",
    "single_pulse_atoms",
    "elliptical_discrepancies",
    "phi_of_density",
    "text_table",
    "md_table",
]


def a2_discrepancy_copula(
    key: jax.Array,
    copula: GaussianCopula,
    cov: ArrayLike,
    w: ArrayLike,
    i: int = 0,
    *,
    nodes: int = 24,
    num: int = 4000,
) -> float:
    r"""Estimate the A2 discrepancy :math:`D_2` (module docstring) of a Gaussian-copula model for weights ``w``.

    At ``nodes`` Gauss–Hermite nodes :math:`z` of :math:`Z_i` we draw ``num`` exact samples of
    :math:`Z_{-i}\mid Z_i=z`; two independent halves give unbiased :math:`\widehat{(v(z)-v_{A2})^2}`. The
    result's Monte Carlo standard error is about :math:`\sqrt{2/\text{num}}\,\max(1,\cdot)`-relative
    (≈ 0.03 for 4000).

    Parameters
    ----------
    key : JAX PRNG key of the conditional samples.
    copula : the model's :class:`~localization.theory.assumptions.GaussianCopula`
        (``theory.assumptions.gaussian_copula(model, n)``).
    cov : exact (N, N) covariance of X (``model.covariance(n)``).
    w : (N,) weights, with a non-zero entry off coordinate ``i``.
    i : the conditioning coordinate, in [0, N).
    nodes : Gauss–Hermite nodes, >= 2.
    num : conditional samples per node, >= 4.

    Returns
    -------
    float
        :math:`D_2 \ge 0`.
    """
    R = np.asarray(copula.latent, dtype=np.float64)
    N = R.shape[0]
    cov = np.asarray(v.float_array("cov", cov, ndim_min=2), dtype=np.float64)
    if cov.shape != (N, N):
        raise ValueError(f"cov must have shape ({N}, {N}), got {cov.shape}")
    w = np.asarray(v.float_array("w", w, ndim_min=1, last_dim=N), dtype=np.float64)
    if w.ndim != 1:
        raise ValueError(f"w must be a single weight vector of shape ({N},), got {w.shape}")
    i = v.integer("i", i, minimum=0)
    if i >= N:
        raise ValueError(f"i must be a coordinate index in [0, {N - 1}], got {i}")
    key = v.key("key", key)
    nodes = v.integer("nodes", nodes, minimum=2)
    num = v.integer("num", num, minimum=4)
    keep = np.arange(N) != i
    rho = R[i, keep]
    cond = R[np.ix_(keep, keep)] - np.outer(rho, rho)
    evals, evecs = np.linalg.eigh(cond)
    root = evecs * np.sqrt(np.clip(evals, 0, None))
    z, wz = normal_rule_hermite(nodes)
    # drawn flat and reshaped: XLA:CPU compiles a 4-D normal draw pathologically slowly (~30 s)
    shape = (nodes, 2, num // 2, N - 1)
    eps = np.asarray(jax.random.normal(key, (math.prod(shape),), dtype=jnp.float64)).reshape(shape)
    Z = z[:, None, None, None] * rho + eps @ root.T
    proj = copula.transform(Z) @ w[keep]  # (nodes, 2, M)
    var = proj.var(axis=-1, ddof=1)  # (nodes, 2)
    ci = cov[i]
    cond_cov = cov - np.outer(ci, ci) / cov[i, i]
    wk = w.copy()
    wk[i] = 0.0
    v_a2 = wk @ cond_cov @ wk
    if v_a2 <= 0:
        raise ValueError("w must have a non-zero component off coordinate i (v_A2 = 0)")
    sq = wz @ ((var[:, 0] - v_a2) * (var[:, 1] - v_a2))
    return float(np.sqrt(max(sq, 0.0)) / v_a2)


def a2_discrepancy(
    model: data.DataModel,
    n: int | tuple[int, ...],
    w: ArrayLike,
    i: int = 0,
    *,
    key: jax.Array | None = None,
    nodes: int = 24,
    num: int = 4000,
) -> float:
    r"""Return the A2 discrepancy :math:`D_2` of a data model for weights ``w`` (module docstring).

    Exact 0 for Gaussian and ±s-valued sign-symmetric models (Ising,
    ``theory.assumptions.holds_exactly``); conditional Monte Carlo at quadrature nodes for NLGP, Kur
    (:func:`a2_discrepancy_copula`).

    Parameters
    ----------
    model : a ``localization.data`` model.
    n : input size (int or grid tuple).
    w : (N,) weights.
    i : the conditioning coordinate.
    key : JAX PRNG key; needed only for models without an exact answer (keyword-only, default None).
    nodes, num : as :func:`a2_discrepancy_copula`.

    Returns
    -------
    float
        :math:`D_2 \ge 0`.
    """
    if holds_exactly(model):
        v.shape("n", n)
        return 0.0
    cop = gaussian_copula(model, n)
    if key is None:
        raise ValueError(f"key must be a JAX PRNG key for {type(model).__name__} (its D2 is estimated by Monte Carlo)")
    return a2_discrepancy_copula(key, cop, model.covariance(n), w, i, nodes=nodes, num=num)


def _weights(name: str, w: ArrayLike) -> np.ndarray:
    w = np.asarray(v.float_array(name, w, ndim_min=1), dtype=np.float64)
    if w.ndim != 1 or not np.all(np.isfinite(w)) or not np.any(w):
        raise ValueError(f"{name} must be one finite, non-zero weight vector of shape (N,), got shape {w.shape}")
    return w


def lattice_weights(w: ArrayLike, top: int = 100) -> np.ndarray:
    r"""Round weights to integers in :math:`[-\text{top},\text{top}]`, the largest entry at ±top.

    :math:`w_{\rm lat}=\mathrm{round}(\text{top}\cdot w/\max_j|w_j|)`: a scale-free rounding, so that the
    Ising transfer matrix (``exact_gated_mean.ising_preactivation_law``, integer weights only) applies.

    Parameters
    ----------
    w : (N,) finite, non-zero weights.
    top : the largest integer, >= 1.

    Returns
    -------
    np.ndarray
        (N,) float64 integers.
    """
    w = _weights("w", w)
    top = v.integer("top", top, minimum=1)
    return np.round(top * w / np.max(np.abs(w)))


def _ising_exact_gate(coupling, w, i):
    # law of <w, X> given X_i = +1; P(<w,X> >= 0 | X_i = -1) = P(<w,X> <= 0 | X_i = +1) by the sign flip
    law = _eg.ising_preactivation_law(coupling, w, i)
    return law, np.array([law.prob[law.values <= 0].sum(), law.prob[law.values >= 0].sum()])


def ising_gate(coupling: float, w: ArrayLike, cov: ArrayLike, i: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Return :math:`P(\langle w,X\rangle\ge0\mid X_i=x)`, :math:`x=-1,+1`, exactly and by Eq. (amp-gate).

    The exact value is the transfer-matrix law of the periodic Ising chain (integer weights); the
    prediction is the Gaussian approximation of Step 3 (``exact_gated_mean.gaussian_gate_probability``).

    Parameters
    ----------
    coupling : Ising coupling J of the class.
    w : (N,) integer-valued weights (:func:`lattice_weights`).
    cov : (N, N) covariance of the chain.
    i : the conditioning coordinate, in [0, N).

    Returns
    -------
    (exact, predicted) : two (2,) arrays, at x = -1 and x = +1.
    """
    w = _weights("w", w)
    i = v.integer("i", i, minimum=0, maximum=w.size - 1)
    _, exact = _ising_exact_gate(coupling, w, i)
    pred = np.asarray(_eg.gaussian_gate_probability(w, cov, i, np.array([-1.0, 1.0])))
    return exact, pred


def binned_gate(w: ArrayLike, samples: ArrayLike, cov: ArrayLike, bins: int = 12):
    r"""Binned :math:`P(\langle w,X\rangle\ge0\mid X_i)` against Eq. (amp-gate), at the steepest coordinate.

    Conditions on the coordinate :math:`i^*` with the largest :math:`|a_i|`
    (``theory.amplifier_argument(w, cov)``) and bins the samples in ``bins`` equal-count bins of
    :math:`X_{i^*}` (``batch_gradient.empirical_gate_probability``).

    Parameters
    ----------
    w : (N,) weights.
    samples : (B, N) samples of X.
    cov : (N, N) covariance of X.
    bins : number of bins, >= 2.

    Returns
    -------
    (estimate, i_star, abs_a, max_diff, max_z) : the ``GateEstimate``, the coordinate, :math:`|a_{i^*}|`,
    the largest absolute difference binned − predicted and the largest such difference in standard errors.
    """
    bins = v.integer("bins", bins, minimum=2)
    a_init = np.asarray(amplifier_argument(w, cov))
    i_star = int(np.argmax(np.abs(a_init)))
    e = _bg.empirical_gate_probability(w, samples, i_star, bins=bins)
    pred = np.asarray(_eg.gaussian_gate_probability(w, cov, i_star, e.x))
    diff = np.abs(e.prob - pred)
    return e, i_star, abs(a_init[i_star]), float(np.max(diff)), float(np.max(diff / e.stderr))


def lindeberg_cases(coupling: float, ns: tuple[int, ...] = (40, 160, 640)) -> dict:
    r"""Compute the A3 cases of Step 3 on the Ising chain exactly: one dominating weight against spread weights.

    For each N in ``ns`` and conditioning on :math:`X_0=+1`: ``"one"`` is :math:`w=e_1`, ``"spread"`` is
    :math:`w_j=\mathrm{round}(30\cos(4\pi j/N+0.4))`. From the exact law of :math:`\langle w,X\rangle`
    given :math:`X_0=1` (``exact_gated_mean.ising_preactivation_law``), with :math:`S_N` the centred sum
    and :math:`\sigma_N^2` its variance.

    Parameters
    ----------
    coupling : Ising coupling J.
    ns : input sizes, each >= 2.

    Returns
    -------
    dict
        ``(kind, N)`` → dict with ``err`` (the largest absolute error of the Gaussian gate probability,
        Eq. (amp-gate)),
        ``var`` (:math:`\sigma_N^2`), ``top`` (:math:`\max_j|w_j|`), ``bound``
        (:math:`\max|S_N|/\sigma_N`), ``m4`` (:math:`\mathbb E S_N^4/\sigma_N^4`), ``share`` (the largest
        term's share, ``assumptions.lindeberg_ratio``) and ``sigma01`` (:math:`\Sigma_{01}`).
    """
    out = {}
    for n in ns:
        n = v.integer("ns", n, minimum=2)
        sig_n = data.Ising(coupling).covariance(n)
        one = np.zeros(n)
        one[1] = 1.0
        spread = np.round(30 * np.cos(4 * np.pi * np.arange(n) / n + 0.4))
        for kind, w in (("one", one), ("spread", spread)):
            law_n, exact_n = _ising_exact_gate(coupling, w, 0)
            pred_n = np.asarray(_eg.gaussian_gate_probability(w, sig_n, 0, np.array([-1.0, 1.0])))
            mean_n = law_n.prob @ law_n.values
            var_n = float(law_n.prob @ (law_n.values - mean_n) ** 2)
            out[kind, n] = dict(
                err=float(np.max(np.abs(exact_n - pred_n))),
                var=var_n,
                top=float(np.max(np.abs(w))),
                bound=float(np.max(np.abs(law_n.values - mean_n)) / math.sqrt(var_n)),
                m4=float(law_n.prob @ (law_n.values - mean_n) ** 4) / var_n**2,
                share=float(_assumptions.lindeberg_ratio(w, sig_n)),
                sigma01=float(sig_n[0, 1]),
            )
    return out


def final_form_error(w: ArrayLike, samples: ArrayLike, cov: ArrayLike, phi) -> float:
    r"""Relative error of Lemma 3.1's :math:`\tfrac12\varphi(a)` against the batch gated mean.

    :math:`\lVert\hat m-\tfrac12\varphi(a)\rVert/\lVert\tfrac12\varphi(a)\rVert` with
    :math:`\hat m` the sample mean of :math:`\mathbb 1(\langle w,X\rangle\ge0)X` and
    :math:`a=\Sigma w/\sqrt{w^\top\Sigma w}`.

    Parameters
    ----------
    w : (N,) weights.
    samples : (B, N) samples of X.
    cov : (N, N) covariance of X.
    phi : a ``theory.Amplifier``.

    Returns
    -------
    float
    """
    lhs = np.asarray(_bg.gated_mean(w, samples))
    rhs = 0.5 * _amp.evaluate_amplifier(phi, np.asarray(amplifier_argument(w, cov)))
    return float(np.linalg.norm(lhs - rhs) / np.linalg.norm(rhs))


def elliptical_errors(w: ArrayLike, samples: ArrayLike, cov: ArrayLike, marginal, phi) -> dict:
    r"""Compare the exact elliptical gated mean (App. C.4, Eq. (amp-elliptical)) with Monte Carlo and two forms.

    Parameters
    ----------
    w : (N,) weights.
    samples : (B, N) samples of the elliptical law.
    cov : (N, N) its covariance.
    marginal : its one-coordinate marginal (``model.marginal``), for :math:`C=\mathbb E|X_1|`.
    phi : the amplifier of that marginal (``theory.amplifier_of``).

    Returns
    -------
    dict
        ``C``; ``z`` (largest distance of the Monte Carlo mean from the exact form, in standard errors);
        ``rel`` (its relative error); ``printed`` (relative error of the printed Eq. (11), without
        :math:`C/2`); ``lemma`` (relative difference of Lemma 3.1's :math:`\tfrac12\varphi(a)` from the
        exact form).
    """
    w = _weights("w", w)
    xs = np.asarray(samples)
    mc_mean, mc_se = metrics.mean_and_se(((xs @ w) >= 0)[:, None] * xs, ddof=0)
    c_abs = marginal.expect(np.abs)
    exact = np.asarray(_eg.elliptical_gated_mean(w, cov, c_abs))
    printed = np.asarray(cov @ w / jnp.sqrt(w @ cov @ w))  # App. C.4, Eq. (11)
    lemma = 0.5 * _amp.evaluate_amplifier(phi, np.asarray(amplifier_argument(w, cov)))
    norm = np.linalg.norm
    return dict(
        C=c_abs,
        z=float(np.max(np.abs(mc_mean - exact) / mc_se)),
        rel=float(norm(mc_mean - exact) / norm(exact)),
        printed=float(norm(mc_mean - printed) / norm(printed)),
        lemma=float(norm(lemma - exact) / norm(exact)),
    )


def ising_discrepancies(coupling: float, w: ArrayLike, cov: ArrayLike) -> tuple[float, float]:
    r"""A1 and A2 discrepancies :math:`(D_1,D_2)` of the Ising chain given :math:`X_0`, exactly.

    :math:`D_1`: :math:`\mathbb E[X_j\mid X_0=1]` from the transfer matrix (``w = e_j``) against
    :math:`\Sigma_{0j}`, relative :math:`L^2` distance over :math:`j\ge1`. :math:`D_2`: the exact variance of
    :math:`\langle w,X\rangle` given :math:`X_0=1` (``w`` with its entry 0 set to zero; by the sign flip
    the same given :math:`X_0=-1`) against the A2 value :math:`w^\top(\Sigma-\sigma_0\sigma_0^\top)w`.

    Parameters
    ----------
    coupling : Ising coupling J.
    w : (N,) integer-valued weights.
    cov : (N, N) covariance of the chain.

    Returns
    -------
    (d1, d2) : floats, both 0 up to rounding (A1 and A2 hold for ±1 data).
    """
    w = _weights("w", w)
    n = w.size
    cov = np.asarray(cov, dtype=np.float64)
    if cov.shape != (n, n):
        raise ValueError(f"cov must have shape ({n}, {n}), got {cov.shape}")
    laws_j = [_eg.ising_preactivation_law(coupling, np.eye(n)[j], 0) for j in range(1, n)]
    cond_mean = np.array([law_j.prob @ law_j.values for law_j in laws_j])
    d1 = float(np.linalg.norm(cond_mean - cov[0, 1:]) / np.linalg.norm(cond_mean))
    w_a2 = w.copy()
    w_a2[0] = 0.0
    law0 = _eg.ising_preactivation_law(coupling, w_a2, 0)
    var_given = law0.prob @ (law0.values - law0.prob @ law0.values) ** 2
    v_a2 = w_a2 @ (cov - np.outer(cov[0], cov[0])) @ w_a2
    return d1, float(abs(var_given - v_a2) / v_a2)


def single_pulse_atoms(pulse: data.SinglePulse, n: int) -> np.ndarray:
    r"""Return the equally likely positive pulses of a single-pulse law: one ±1 row per (length, start).

    The law's atoms are these rows and their negatives (the sign flip).

    Parameters
    ----------
    pulse : a ``data.SinglePulse`` model.
    n : input length, >= 2.

    Returns
    -------
    np.ndarray
        (lengths × n, n) rows, +1 on the pulse (cyclically from its start), −1 elsewhere.
    """
    if not isinstance(pulse, data.SinglePulse):
        raise TypeError(f"pulse must be a data.SinglePulse, got {type(pulse).__name__}")
    n = v.integer("n", n, minimum=2)
    lo, hi = pulse.lengths(n)
    return np.array(
        [np.where((np.arange(n) - s) % n < length, 1.0, -1.0) for length in range(lo, hi + 1) for s in range(n)]
    )


def elliptical_discrepancies(samples: ArrayLike, w: ArrayLike) -> tuple[float, float, float]:
    r"""Measured A1/A2 discrepancies of a sample, and the outer/inner conditional-variance ratio.

    :math:`D_1`, :math:`D_2` by binning (``binned_discrepancies``, conditioning on :math:`X_0`); the ratio
    is the variance of :math:`\sum_{j\ne0}w_jX_j`, its linear dependence on :math:`X_0` removed, in the
    outer tenth of :math:`|X_0|` over that in the inner half (1 when A2 holds).

    Parameters
    ----------
    samples : (B, N) samples.
    w : (N,) weights.

    Returns
    -------
    (d1, d2, variance_ratio) : floats.
    """
    xs = np.asarray(samples)
    w = _weights("w", w)
    n = xs.shape[-1]
    d1 = _binned.a1_discrepancy_samples(xs)
    d2 = _binned.a2_discrepancy_samples(xs, w)
    rest = xs @ np.where(np.arange(n) == 0, 0.0, w)
    resid = rest - xs[:, 0] * np.mean(rest * xs[:, 0]) / np.mean(xs[:, 0] ** 2)
    inner, outer = np.quantile(np.abs(xs[:, 0]), [0.5, 0.9])
    ratio = float(resid[np.abs(xs[:, 0]) >= outer].var() / resid[np.abs(xs[:, 0]) <= inner].var())
    return d1, d2, ratio


def phi_of_density(a: float, density, upper: float) -> float:
    r"""φ(a) of Eq. (amp-phi) for a symmetric density, by adaptive quadrature (SciPy ``quad``).

    :math:`\varphi(a)=2\int_0^{\rm upper}x\operatorname{erf}(x\,\mathrm{alg}^{-1}(a)/\sqrt2)\,p(x)\,dx`.

    Parameters
    ----------
    a : in (-1, 1).
    density : the density p on x >= 0 (a callable of one float).
    upper : the end of the support (``math.inf`` allowed), > 0.

    Returns
    -------
    float
    """
    import scipy.integrate
    from scipy.special import erf

    a = v.in_range("a", a, -1.0, 1.0, low_open=True, high_open=True)
    if not callable(density):
        raise TypeError(f"density must be callable, got {type(density).__name__}")
    upper = float(upper)
    if not upper > 0:
        raise ValueError(f"upper must be > 0 (math.inf allowed), got {upper}")
    c = a / math.sqrt(1 - a**2)
    value, _ = scipy.integrate.quad(
        lambda xx: xx * erf(c * xx / math.sqrt(2)) * density(xx), 0, upper, limit=200, epsabs=1e-14, epsrel=1e-12
    )
    return 2 * value


def text_table(header, rows) -> str:
    """Format a plain-text table with aligned columns (for printed, exact numbers): header, a rule, rows."""
    cells = [list(header)] + [[str(c) for c in row] for row in rows]
    if any(len(r) != len(header) for r in cells):
        raise ValueError(f"rows must have {len(header)} entries each, like header")
    widths = [max(len(r[k]) for r in cells) for k in range(len(header))]
    lines = ["  ".join(c.ljust(wd) for c, wd in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join([lines[0], "  ".join("-" * wd for wd in widths)] + lines[1:])


def md_table(header, rows) -> str:
    """Format a Markdown table (for measured numbers shown with ``book.show_measured(..., markdown=True)``)."""
    rows = [list(r) for r in rows]
    if any(len(r) != len(header) for r in rows):
        raise ValueError(f"rows must have {len(header)} entries each, like header")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])
