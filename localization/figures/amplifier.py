r"""The figures of the amplifier chapter (``book/amplifier.md``): φ against the line.

* :data:`A_POS` — the points of [0, 1] where the chapter evaluates φ;
* :func:`draw_amplifier` — φ of a marginal beside its cubic Taylor polynomial and the linear
  reference, and the deviation from that line (the chapter's widget and :func:`fig3_amplifier`);
* :func:`draw_phi_models`, :func:`draw_phi_deviations` — φ of every model of the chapter, and its
  deviation from the line (the chapter's figures of φ);
* :func:`draw_kur_crossings` — where φ of Kur(k) crosses the line;
* :func:`draw_gate_probability` — the probability that the neuron is active given one coordinate;
* :func:`fig3_amplifier` — the registered builder (``python -m localization figures``): φ of the
  paper's Fig. 3 models.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from jax.typing import ArrayLike

from localization import data, plotting, theory
from localization import validation as v
from localization.figures.registry import Built, check_scale, new_figure, register

__all__ = [
    "SQRT_2_OVER_PI",
    "A_POS",
    "FIG3_MODELS",
    "draw_amplifier",
    "draw_phi_models",
    "draw_phi_deviations",
    "draw_kur_crossings",
    "draw_gate_probability",
    "fig3_amplifier",
]

#: √(2/π), the slope of φ for Gaussian data (the linear reference).
SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
#: Points of [0, 1] where the chapter evaluates φ: a uniform grid with the points its checks read.
A_POS = np.unique(np.concatenate([np.linspace(0.0025, 0.9975, 200), [0.01, 0.1, 0.8, 0.999, 1 - 1e-10]]))

#: The models of the paper's Fig. 3 at ξ = 3 (label → long-lengthscale model), one row each.
FIG3_MODELS = {
    "Ising(J = 0.7)": data.Ising(0.7),
    "NLGP(g = 0.01)": data.NLGP(3.0, 0.01),
    "Kur(k = 5)": data.Kur(3.0, 5.0),
}


def draw_amplifier(top: Any, bottom: Any, marginal: Any, a: ArrayLike, *, name: str) -> np.ndarray:
    r"""Draw φ of ``marginal`` (paper Eq. (6)) on the points ``a`` of [0, 1], on two axes.

    Parameters
    ----------
    top : matplotlib Axes
        The linear reference :math:`\sqrt{2/\pi}\,a` (dashed), the cubic Taylor polynomial (when the
        fourth moment is finite) and φ, titled with ``name`` and the exact excess kurtosis.
    bottom : matplotlib Axes
        The deviations from the line, with the vertical range set by φ's.
    marginal : data marginal
        The law of one coordinate (``data.<Model>.marginal``).
    a : array_like, shape (P,)
        Points of [0, 1].
    name : str
        The model's label in the title.

    Returns
    -------
    np.ndarray, shape (P,)
        The deviation of φ from the line, ``theory.linear_deviation(φ, a)``.
    """
    a = np.asarray(v.float_array("a", a, ndim_min=1), dtype=np.float64)
    slope = SQRT_2_OVER_PI
    phi = theory.amplifier_of(marginal)
    top.plot(a, slope * a, "--", color="0.6", label=r"$\sqrt{2/\pi}\,a$")
    dev_taylor = None
    if math.isfinite(marginal.fourth_moment):
        taylor = theory.evaluate_amplifier(theory.amplifier_taylor(marginal), a)
        top.plot(a, taylor, color="C3", label="cubic Taylor")
        dev_taylor = taylor - slope * a
    top.plot(a, theory.evaluate_amplifier(phi, a), color="k", label=r"$\varphi$")
    ek = marginal.excess_kurtosis
    top.set_title(f"{name}, excess kurtosis {'∞' if math.isinf(ek) else f'{ek:.3f}'}")
    top.legend(frameon=False)
    dev = theory.linear_deviation(phi, a)
    bottom.plot(a, dev, color="k")
    if dev_taylor is not None:
        bottom.plot(a, dev_taylor, color="C3")
    bottom.axhline(0, color="0.6", lw=0.8)
    lim = 1.3 * max(float(np.max(np.abs(dev))), 1e-4)
    bottom.set_ylim(-lim, lim)
    bottom.set_xlabel(r"$a$")
    bottom.set_ylabel(r"$\varphi-\sqrt{2/\pi}\,a$")
    return dev


def draw_phi_models(axes: Any, marginals: Mapping[str, Any], phi_values: Mapping[str, ArrayLike], a: ArrayLike) -> Any:
    r"""Draw φ of several marginals, one panel each, with the line and the cubic Taylor polynomial.

    Each panel: the linear reference :math:`\sqrt{2/\pi}\,a` (dashed), the cubic Taylor polynomial
    (red, when the fourth moment is finite) and φ (black), titled with the name and the excess
    kurtosis; vertical range [-1.1, 1.1]; axis labels on the outer panels.

    Parameters
    ----------
    axes : 2-D array of matplotlib Axes
        At least one panel per marginal, filled row by row.
    marginals : mapping of str to marginal
        Name → the law of one coordinate.
    phi_values : mapping of str to array_like, shape (P,)
        Name → φ evaluated on ``a``.
    a : array_like, shape (P,)
        Points of [-1, 1].

    Returns
    -------
    np.ndarray
        The axes, as a 2-D object array.
    """
    grid = np.asarray(axes, dtype=object)
    if grid.ndim != 2 or grid.size < len(marginals):
        raise ValueError(f"axes must be a 2-D grid of at least {len(marginals)} panels, got shape {grid.shape}")
    if set(phi_values) != set(marginals):
        raise ValueError(f"phi_values must name the marginals {list(marginals)}, got {list(phi_values)}")
    a = np.asarray(v.float_array("a", a, ndim_min=1), dtype=np.float64)
    for ax, (name, m) in zip(grid.flat, marginals.items(), strict=False):
        ax.plot(a, SQRT_2_OVER_PI * a, "--", color="0.6", lw=1)
        if math.isfinite(m.fourth_moment):
            ax.plot(a, theory.amplifier_taylor(m)(a), color="C3", lw=1)
        ax.plot(a, phi_values[name], color="k", lw=1.3)
        kappa = m.excess_kurtosis
        ax.set_title(f"{name}\nexcess kurtosis {'∞' if math.isinf(kappa) else f'{kappa:.2f}'}")
        ax.set_ylim(-1.1, 1.1)
    for ax in grid[-1]:
        ax.set_xlabel(r"$a$")
    for ax in grid[:, 0]:
        ax.set_ylabel(r"$\varphi(a)$")
    return grid


def draw_phi_deviations(ax: Any, phi_values: Mapping[str, ArrayLike], a: ArrayLike) -> Any:
    r"""Draw φ's deviation from the line :math:`\sqrt{2/\pi}\,a` on (0, 1], one curve per name.

    The first ten curves solid, the others dashed (colours repeat after ten); a zero line; one legend
    below the figure.

    Parameters
    ----------
    ax : matplotlib Axes
        The panel.
    phi_values : mapping of str to array_like, shape (P,)
        Name → φ evaluated on ``a``.
    a : array_like, shape (P,)
        Points of [-1, 1]; only the positive ones are drawn (φ is odd).

    Returns
    -------
    matplotlib Axes
        ``ax``.
    """
    a = np.asarray(v.float_array("a", a, ndim_min=1), dtype=np.float64)
    positive = a > 0
    for k, (name, values) in enumerate(phi_values.items()):
        dev = np.asarray(values)[positive] - SQRT_2_OVER_PI * a[positive]
        ax.plot(a[positive], dev, "-" if k < 10 else "--", lw=1.2, label=name, color=f"C{k % 10}")
    ax.axhline(0, color="0.5", lw=0.8)
    ax.set_xlabel(r"$a$")
    ax.set_ylabel(r"$\varphi(a)-\sqrt{2/\pi}\,a$")
    ax.figure.legend(loc="outside lower center", ncol=3)
    return ax


def draw_kur_crossings(
    axes: Any,
    a: ArrayLike,
    deviations: Mapping[str, tuple[ArrayLike, str]],
    k_window: ArrayLike,
    a_cross: ArrayLike,
    k_e: float,
    k_star: float,
) -> Any:
    r"""Draw where φ of Kur(k) crosses the line: deviations for some k, and the crossing point a_c(k).

    Parameters
    ----------
    axes : 2 matplotlib Axes
        Left: φ's deviation from the line :math:`\sqrt{2/\pi}\,a` for each entry of ``deviations``
        (one legend below the figure); right: the crossing point against k, with dotted lines at
        ``k_e`` and ``k_star``.
    a : array_like, shape (P,)
        Points of [0, 1].
    deviations : mapping of str to (array_like of shape (P,), colour)
        Legend label → the deviation on ``a`` and its colour.
    k_window : array_like, shape (K,)
        Exponents k where the crossing point was found.
    a_cross : array_like, shape (K,)
        The crossing points.
    k_e, k_star : float
        The exponents where E|X| = √(2/π) and where the excess kurtosis vanishes.

    Returns
    -------
    np.ndarray
        The two axes.
    """
    left, right = np.asarray(axes, dtype=object).ravel()
    a = np.asarray(v.float_array("a", a, ndim_min=1), dtype=np.float64)
    for label, (dev, color) in deviations.items():
        left.plot(a, dev, color=color, lw=1.2, label=label)
    left.axhline(0, color="0.5", lw=0.8)
    left.set_xlabel(r"$a$")
    left.set_ylabel(r"$\varphi(a)-\sqrt{2/\pi}\,a$")
    left.figure.legend(loc="outside lower center", ncol=3)
    right.plot(k_window, a_cross, "o-", color="k", ms=3)
    right.axvline(k_e, color="C0", ls=":", lw=1)
    right.axvline(k_star, color="C3", ls=":", lw=1)
    right.text(k_e, 0.05, r" $k_E$", color="C0")
    right.text(k_star, 0.9, r"$k^*$ ", color="C3", ha="right")
    right.set_xlabel(r"$k$")
    right.set_ylabel(r"crossing point $a_c(k)$")
    right.set_ylim(0, 1)
    return np.array([left, right], dtype=object)


def draw_gate_probability(
    axes: Any,
    panels: Mapping[str, tuple[ArrayLike, ArrayLike, Any, int, float]],
    exact: Mapping[str, tuple[ArrayLike, ArrayLike]] | None = None,
) -> np.ndarray:
    r"""Draw the probability that the neuron is active given one input coordinate, one panel per model.

    Each panel: the Gaussian approximation ``theory.exact_gated_mean.gaussian_gate_probability`` (red), the
    binned Monte Carlo estimate with ±2 standard errors (black), and exact values where given
    (crosses); titled with the model, the coordinate i and :math:`|a_i|`; one legend below.

    Parameters
    ----------
    axes : matplotlib Axes, one per panel
        The panels (create them with ``sharey=True``).
    panels : mapping of str to (w, cov1, estimate, i, abs_a)
        Model name → the weights (N,), the class-1 covariance (N, N), the
        ``theory.batch_gradient.GateEstimate`` of coordinate ``i``, ``i`` and :math:`|a_i|`.
    exact : mapping of str to (x, probability), optional
        Model name → exact conditional probabilities at the points x.

    Returns
    -------
    np.ndarray
        The axes.
    """
    from localization.theory import exact_gated_mean

    grid = plotting.axes_grid("axes", np.asarray(axes, dtype=object).ravel(), (len(panels),))
    exact = {} if exact is None else exact
    for ax, (name, (w, cov1, e, i, abs_a)) in zip(grid, panels.items(), strict=True):
        xx = np.linspace(e.x.min(), e.x.max(), 200)
        ax.plot(xx, exact_gated_mean.gaussian_gate_probability(w, cov1, i, xx), color="C3", label="Gaussian approx.")
        ax.errorbar(e.x, e.prob, yerr=2 * e.stderr, fmt="o", ms=3, color="k", label="Monte Carlo ± 2 s.e.")
        if name in exact:
            ax.plot(*exact[name], "x", ms=8, color="C0", label="exact (transfer matrix)")
        ax.set_title(f"{name}\n$i$ = {i}, $|a_i|$ = {abs_a:.2f}")
        ax.set_xlabel(r"$x$")
    grid[0].set_ylabel(r"$P(\langle w,X\rangle\geq 0\mid X_i=x)$")
    grid[0].figure.legend(*grid[0].get_legend_handles_labels(), loc="outside lower center", ncol=2)
    return grid


@register("fig3_amplifier", "amplifier")
def fig3_amplifier(scale: str = "chapter") -> Built:
    """Build the amplifier φ of the paper's Fig. 3 models against the line, one model above the other.

    Ising J = 0.7, NLGP(0.01), Kur(5) at ξ = 3 (the paper's Fig. 3, second column): φ with its cubic
    Taylor polynomial and the linear reference, and the deviation from the line below it (exact
    quadrature, the same at both scales).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        Both scales draw the same figure.

    Returns
    -------
    Built
        The figure; ``data`` maps each label of :data:`FIG3_MODELS` to φ's deviation from the line
        on :data:`A_POS`.
    """
    check_scale(scale)
    fig = new_figure((plotting.COLUMN_WIDTH, 11.0), layout="constrained")
    deviations = {}
    for sub, (label, model) in zip(fig.subfigures(len(FIG3_MODELS), 1), FIG3_MODELS.items(), strict=True):
        top, bottom = sub.subplots(2, 1, sharex=True, height_ratios=[2, 1])
        deviations[label] = draw_amplifier(top, bottom, model.marginal, A_POS, name=label)
    return Built(fig, deviations)
