"""Figures of the frequency-specialisation chapter.

Drawing only (the numbers come from
:mod:`localization.experiments.specialisation`).
"""

from __future__ import annotations

import numpy as np
from jax.typing import ArrayLike

from localization import field_analysis
from localization import validation as v
from localization.experiments.specialisation import Measurements

__all__ = ["draw_populations", "draw_reduced"]


def draw_populations(m: Measurements, network: int = 0):
    """Draw the fields of one network and window share against bias for all neurons.

    Left: the K fields of network ``network`` (neuron 1 at the bottom), each divided by its largest
    absolute entry, blue when localized, red when not. Right: window share :math:`s_W` against the
    learned bias :math:`b_k` for every neuron of every network, with the threshold
    :data:`localization.field_analysis.LOCALIZED_SHARE` dashed.

    Parameters
    ----------
    m : Measurements
        From :func:`measure`; ``fields`` (I, K, N).
    network : int
        Index of the network drawn on the left, 0 ≤ network < I.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    from localization import plotting

    if not isinstance(m, Measurements):
        raise TypeError(f"m must be Measurements, got {type(m).__name__}")
    network = v.integer("network", network, 0)
    if network >= len(m.fields):
        raise ValueError(f"network must be below the number of networks {len(m.fields)}, got {network}")
    K = m.fields.shape[1]
    fig, axes = plt.subplots(1, 2, figsize=(plotting.COLUMN_WIDTH, 2.7), layout="constrained")
    for k in range(K):
        w = m.fields[network, k]
        color = "C0" if m.localized[network, k] else "C3"
        axes[0].plot(w / np.abs(w).max() + 2.2 * k, color=color, lw=1.2)
    axes[0].set(
        xlabel="site $i$",
        ylabel="neuron $k$ (field / its max)",
        yticks=2.2 * np.arange(0, K, 3),
        yticklabels=range(1, K + 1, 3),
    )
    for mask, color, label in [(m.localized, "C0", "localized"), (~m.localized, "C3", "not localized")]:
        axes[1].scatter(m.bias[mask], m.share[mask], s=10, color=color, label=label)
    axes[1].axvline(0, color="0.5", lw=0.8)
    axes[1].axhline(field_analysis.LOCALIZED_SHARE, color="0.5", lw=0.8, ls="--")
    axes[1].set(xlabel="learned bias $b_k$", ylabel="window share $s_W$")
    axes[1].legend(loc="center right")
    return fig


def draw_reduced(w_minus: ArrayLike, w_plus: ArrayLike, m: Measurements, count: int = 6):
    """Draw the two shared fields of a reduced model over aligned fields of the full network.

    Each panel shows one shared field (coloured) and the first ``count`` full-network fields of its
    population (grey: localized fields under ``w_minus``, the others under ``w_plus``), each
    translated and sign-flipped to the largest circular cross-correlation with the shared field
    (Eq. (eq-sp-xcorr)); all are divided by their largest absolute entry.

    Parameters
    ----------
    w_minus, w_plus : ArrayLike
        (N,) the shared fields with the negative and the positive bias.
    m : Measurements
        From :func:`measure` of the full network, fields (I, K, N).
    count : int
        Fields drawn per population (≥ 0).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    from localization import plotting

    if not isinstance(m, Measurements):
        raise TypeError(f"m must be Measurements, got {type(m).__name__}")
    N = m.fields.shape[-1]
    shared = [np.asarray(v.float_array(n, w, last_dim=N)) for n, w in (("w_minus", w_minus), ("w_plus", w_plus))]
    for name, w in zip(("w_minus", "w_plus"), shared, strict=True):
        if w.shape != (N,):
            raise ValueError(f"{name} must have shape ({N},), got {w.shape}")
    count = v.integer("count", count, 0)
    fig, axes = plt.subplots(1, 2, figsize=(plotting.COLUMN_WIDTH, 2.4), layout="constrained", sharey=True)
    panels = [
        (shared[0], m.localized, "C0", "$w^-$ (negative bias)"),
        (shared[1], ~m.localized, "C3", "$w^+$ (positive bias)"),
    ]
    for ax, (field, mask, color, title) in zip(axes, panels, strict=True):
        for w in m.fields[mask][:count]:
            c = np.fft.irfft(np.conj(np.fft.rfft(w)) * np.fft.rfft(field), n=N)
            t = int(np.argmax(np.abs(c)))
            aligned = np.sign(c[t]) * np.roll(w, t)
            ax.plot(aligned / np.abs(aligned).max(), color="0.7", lw=0.8)
        ax.plot(field / np.abs(field).max(), color=color, lw=1.6)
        ax.set(title=title, xlabel="site $i$")
    axes[0].set_ylabel("field (scaled)")
    return fig
