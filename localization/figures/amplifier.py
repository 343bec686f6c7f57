r"""The figures of the amplifier chapter (``book/amplifier.md``): φ against the line.

* :data:`A_POS` — the points of [0, 1] where the chapter evaluates φ;
* :func:`draw_amplifier` — φ of a marginal beside its cubic Taylor polynomial and the linear
  reference, and the deviation from that line (the chapter's widget and :func:`fig3_amplifier`);
* :func:`fig3_amplifier` — the registered builder (``python -m localization figures``): φ of the
  paper's Fig. 3 models.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from jax.typing import ArrayLike

from localization import data, plotting, theory
from localization import validation as v
from localization.figures.registry import Built, check_scale, new_figure, register

__all__ = ["A_POS", "FIG3_MODELS", "draw_amplifier", "fig3_amplifier"]

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
    slope = math.sqrt(2 / math.pi)
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
