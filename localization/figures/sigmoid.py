"""Figures of the sigmoid chapter.

Drawing only: the bias flow comes from :mod:`localization.theory.sigmoid`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from jax.typing import ArrayLike

from localization import validation as v
from localization.theory import sigmoid as sg

__all__ = ["drift_figure"]


def drift_figure(cov0: ArrayLike, cov1: ArrayLike, xi: tuple[float, float]) -> Any:
    r"""Return the chapter's figure of the bias flow and of the per-mode class spectra.

    Left: ``theory.sigmoid.bias_drift`` (labels ±1, solid) and ``notes001_eq42`` (dashed) against the
    bias for the constant and the highest-frequency unit-norm field. Right: per Fourier mode
    :math:`k\le N/2`, the ratio :math:`\lambda_1/\lambda_0` and the difference :math:`\lambda_1-\lambda_0`
    (clipped at 1e-6) of the two spectra (``data.spectral.eigenvalues``).

    Parameters
    ----------
    cov0, cov1 : ArrayLike
        (N, N) class covariances, N even.
    xi : tuple[float, float]
        Length-scales (class -1, class +1) of the spectra.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    from localization import plotting
    from localization.data import spectral

    cov0, cov1 = v.covariance_pair(("cov0", "cov1"), cov0, cov1)
    n = cov0.shape[0]
    if not (isinstance(xi, tuple) and len(xi) == 2):
        raise TypeError(f"xi must be a tuple (xi0, xi1), got {xi!r}")
    bs = np.linspace(-3, 3, 121)
    i = np.arange(n)
    fields = (("constant", np.ones(n) / math.sqrt(n), "C0"), ("highest frequency", (-1.0) ** i / math.sqrt(n), "C3"))
    lam0, lam1 = spectral.eigenvalues(xi[0], n), spectral.eigenvalues(xi[1], n)
    freq = np.arange(n // 2 + 1)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(plotting.COLUMN_WIDTH, 4.6), layout="constrained")
    for name, w, col in fields:
        s1, s0 = w @ cov1 @ w, w @ cov0 @ w
        ax1.plot(bs, sg.bias_drift(s1, s0, bs), color=col, label=f"{name}, ±1")
        ax1.plot(bs, sg.notes001_eq42(s1, s0, bs), color=col, ls="--", label=f"{name}, (42)")
    ax1.axhline(0, color="k", lw=0.5)
    ax1.set(xlabel="bias $b$", ylabel=r"$\tau\,db/dt$")
    ax1.legend(loc="upper left", bbox_to_anchor=(-0.05, -0.2))
    ax2.semilogy(freq, (lam1 / lam0)[: n // 2 + 1], "o-", ms=3, label=r"ratio $\lambda_1/\lambda_0$")
    ax2.semilogy(
        freq, np.maximum(lam1 - lam0, 1e-6)[: n // 2 + 1], "s-", ms=3, label=r"difference $\lambda_1-\lambda_0$"
    )
    ax2.set(xlabel="frequency $k$", ylabel="per-mode value")
    ax2.legend(loc="upper left", bbox_to_anchor=(-0.05, -0.2))
    return fig
