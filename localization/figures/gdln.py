"""Figures of the chapter on gated deep linear networks.

Drawing only (the numbers come from
:mod:`localization.experiments.gdln`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from jax.typing import ArrayLike

from localization import validation as v

__all__ = ["draw_gate_flips", "draw_ols_fields", "draw_ols_vs_learned", "draw_gate_field"]


def _panel_array(name: str, value: Any, ndim: int) -> np.ndarray:
    arr = np.asarray(v.float_array(name, value, ndim_min=ndim), dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got non-finite entries (shape {arr.shape})")
    if arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {arr.shape}")
    return arr


def draw_gate_flips(
    notes: dict[str, ArrayLike],
    relu: dict[str, ArrayLike],
    gains: tuple[float, ...],
    freeze: ArrayLike,
    own_dist: ArrayLike,
) -> Any:
    r"""Draw the GDLN chapter's figure "Do the gates stay fixed?" (three panels).

    Panel a: the fraction :math:`1-p(t)` of inputs whose gate changes per interval (notes 001
    Eq. (45)); panel b: the preactivation's excess kurtosis; panel c: the shape distance between the
    OLS field of the gate frozen at :math:`t_*` and the final field.

    Parameters
    ----------
    notes : dict with the run at the notes' settings: ``t`` (T,) checkpoint times, ``flips`` (U, T-1)
        measured :math:`1-p` per unit and interval, ``gauss`` (U, T-1) Sheppard's prediction of it,
        ``kurt`` (U, T) measured excess kurtosis, ``kurt_gauss`` (U, T) its two-normal mixture form.
    relu : dict with the localizing neuron: ``t`` (T',) times, ``flips`` (G, I, T'-1) and ``kurt``
        (G, I, T') per gain and initialisation.
    gains : the G gains, for the legend.
    freeze : (F,) freezing times :math:`t_*`.
    own_dist : (G, I, F) shape distances.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    from localization import plotting

    t_n = _panel_array("notes['t']", notes["t"], 1)
    flips_n = _panel_array("notes['flips']", notes["flips"], 2)
    gauss_n = _panel_array("notes['gauss']", notes["gauss"], 2)
    kurt_n = _panel_array("notes['kurt']", notes["kurt"], 2)
    kurt_g = _panel_array("notes['kurt_gauss']", notes["kurt_gauss"], 2)
    t_r = _panel_array("relu['t']", relu["t"], 1)
    flips_r = _panel_array("relu['flips']", relu["flips"], 3)
    kurt_r = _panel_array("relu['kurt']", relu["kurt"], 3)
    freeze = _panel_array("freeze", freeze, 1)
    own_dist = _panel_array("own_dist", own_dist, 3)
    gains = tuple(float(g) for g in gains)
    if not len(gains) == flips_r.shape[0] == kurt_r.shape[0] == own_dist.shape[0]:
        raise ValueError(
            f"gains, relu['flips'], relu['kurt'] and own_dist must have one entry per gain, got "
            f"{len(gains)}, {flips_r.shape[0]}, {kurt_r.shape[0]}, {own_dist.shape[0]}"
        )
    fig, axes = plt.subplots(1, 3, figsize=(plotting.COLUMN_WIDTH, 3.8))
    ax = axes[0]
    ax.fill_between(t_n[:-1], flips_n.min(0), flips_n.max(0), color="0.8", lw=0)
    ax.plot(t_n[:-1], flips_n.mean(0), color="0.3", lw=1, label=r"notes' settings, $\delta t=0.2$")
    ax.plot(t_n[:-1], gauss_n.mean(0), "k--", lw=0.8, label="Sheppard's formula")
    for j, g in enumerate(gains):
        ax.plot(t_r[:-1], flips_r[j].mean(0), color=f"C{j}", lw=1, label=rf"M2, $g={g:g}$, $\delta t=1$")
    ax.set(yscale="log", xlabel="$t$", ylabel=r"$1-p(t)$", title="(a) gate flips per interval")
    ax = axes[1]
    ax.plot(t_n, kurt_n.mean(0), color="0.3", lw=1)
    ax.plot(t_n, kurt_g.mean(0), "k--", lw=0.8)
    for j in range(len(gains)):
        ax.plot(t_r, kurt_r[j].mean(0), color=f"C{j}", lw=1)
    ax.axhline(0, color="0.6", lw=0.5)
    ax.set(xlabel="$t$", ylabel="excess kurtosis", title="(b) preactivation")
    ax = axes[2]
    for j in range(len(gains)):
        ax.fill_between(freeze, own_dist[j].min(0), own_dist[j].max(0), color=f"C{j}", alpha=0.2, lw=0)
        ax.plot(freeze, np.median(own_dist[j], 0), "o-", ms=3, color=f"C{j}", lw=1)
    ax.set(xscale="symlog", xlabel="freezing time $t_*$", ylabel=r"distance to $w(T)$", title=r"(c) $w_{\rm OLS}(t_*)$")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=2)
    return fig


def draw_ols_fields(gains: tuple[float, ...], drives: ArrayLike, fields: ArrayLike, centre: int) -> Any:
    r"""Draw the coordinate gate's :math:`\Sigma^{yx}` and OLS field over the gain (GDLN chapter).

    Parameters
    ----------
    gains : the G gains (at least one, positive).
    drives : (G, N) :math:`\Sigma^{yx}(p_i)` per gain (Eq. (gdln-gate-correlation)).
    fields : (G, N) the OLS fields :math:`w_\infty=A^{-1}b` per gain (Eq. (gdln-ols-field)).
    centre : the gate's coordinate i, in [0, N).

    Returns
    -------
    matplotlib.figure.Figure, with top left :math:`\Sigma^{yx}` and top right :math:`w_\infty` (each
    scaled to its largest entry, against :math:`j-i`) and at the bottom both IPRs against the gain.
    """
    import matplotlib.pyplot as plt

    from localization import metrics, plotting

    drives = _panel_array("drives", drives, 2)
    fields = _panel_array("fields", fields, 2)
    gains = tuple(v.positive("gains", g) for g in gains)
    if not (len(gains) == drives.shape[0] and drives.shape == fields.shape):
        raise ValueError(
            f"drives and fields must both have shape (len(gains), N) = ({len(gains)}, N), got {drives.shape} "
            f"and {fields.shape}"
        )
    n = drives.shape[1]
    centre = v.integer("centre", centre, 0, n - 1)
    ipr_b = np.asarray(metrics.ipr(drives))
    ipr_w = np.asarray(metrics.ipr(fields))
    fig, axes = plt.subplot_mosaic([["b", "w"], ["ipr", "ipr"]], figsize=(plotting.COLUMN_WIDTH, 5.6))
    axes = [axes["b"], axes["w"], axes["ipr"]]
    sites = np.arange(n) - centre
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(gains)))
    for g, b_g, w_g, col in zip(gains, drives, fields, colors, strict=True):
        axes[0].plot(sites, b_g / np.max(np.abs(b_g)), color=col, label=f"g = {g:g}")
        axes[1].plot(sites, w_g / np.max(np.abs(w_g)), color=col)
    axes[2].semilogx(gains, ipr_w, "o-", label=r"OLS field $w_\infty$")
    axes[2].semilogx(gains, ipr_b, "s--", label=r"$\Sigma^{yx}$")
    axes[2].axhline(1 / n, color="gray", lw=0.8, label="1/N")
    axes[0].set(xlim=(-10, 10), xlabel="j - i", title=r"$\Sigma^{yx}(p_i)_j$ (scaled)")
    axes[1].set(xlim=(-10, 10), xlabel="j - i", title=r"OLS field $w_\infty$ (scaled)")
    axes[2].set(xlabel="gain g", ylabel="IPR", title="localization")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncol=3)
    axes[2].legend()
    return fig


def draw_ols_vs_learned(gains: tuple[float, ...], learned: ArrayLike, ols: ArrayLike, centre: int) -> Any:
    r"""Draw the coordinate gate's OLS field against the learned fields (GDLN chapter).

    Each learned field is rolled on the ring so that its largest :math:`|w_i|` sits at ``centre``,
    made positive there, and scaled to unit norm, as in :func:`aligned_distance`.

    Parameters
    ----------
    gains : the G gains, one panel each.
    learned : (G, I, N) the fields the ReLU neuron ends with.
    ols : (G, N) the OLS field of the coordinate gate at each gain.
    centre : the gate's coordinate, in [0, N).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    from localization import plotting

    learned = _panel_array("learned", learned, 3)
    ols = _panel_array("ols", ols, 2)
    gains = tuple(float(g) for g in gains)
    if not (len(gains) == learned.shape[0] == ols.shape[0] and learned.shape[2] == ols.shape[1]):
        raise ValueError(
            f"learned (G, I, N) and ols (G, N) must match len(gains) = {len(gains)} and N, got "
            f"{learned.shape} and {ols.shape}"
        )
    n = ols.shape[1]
    centre = v.integer("centre", centre, 0, n - 1)
    fig, axes = plt.subplots(1, len(gains), figsize=(plotting.COLUMN_WIDTH, 2.8), sharey=True)
    axes = np.atleast_1d(axes)
    offset = np.arange(n) - centre
    for j, (ax, g) in enumerate(zip(axes, gains, strict=True)):
        for w in learned[j]:
            u = np.roll(w, centre - int(np.argmax(np.abs(w))))
            u = u * np.sign(u[centre])
            ax.plot(offset, u / np.linalg.norm(u), color="0.55", lw=0.7)
        ax.plot(offset, ols[j] / np.linalg.norm(ols[j]), color="C3", lw=1.5)
        ax.set(xlim=(-10, 10), xlabel="site $-$ peak", title=rf"$g={g:g}$")
    axes[0].set_ylabel("field / norm")
    axes[0].plot([], [], color="0.55", label="ReLU neuron, $t=100$ (aligned)")
    axes[0].plot([], [], color="C3", label="OLS field of the coordinate gate")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=2)
    return fig


def draw_gate_field(drive: ArrayLike, field: ArrayLike, centre: int, title: str) -> Any:
    r"""Draw one gate's :math:`\Sigma^{yx}` (left) and OLS field (right): the GDLN chapter's explorer.

    Parameters
    ----------
    drive : (N,) :math:`\Sigma^{yx}` of the gate.
    field : (N,) its OLS field :math:`w_\infty=A^{-1}b`, titled with its IPR.
    centre : the gate's site i in [0, N); both are drawn against :math:`j-i`.
    title : the figure's title.

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    from localization import metrics, plotting

    drive = _panel_array("drive", drive, 1)
    field = _panel_array("field", field, 1)
    if drive.shape != field.shape:
        raise ValueError(f"drive and field must have the same shape (N,), got {drive.shape} and {field.shape}")
    centre = v.integer("centre", centre, 0, drive.size - 1)
    if not isinstance(title, str):
        raise TypeError(f"title must be a str, got {type(title).__name__}")
    sites = np.arange(drive.size) - centre
    fig, (left, right) = plt.subplots(1, 2, figsize=(plotting.COLUMN_WIDTH, 2.8), sharex=True)
    left.plot(sites, drive, "o-", ms=3, color="C0")
    left.set(xlabel="j - i", title=r"$\Sigma^{yx}_j$")
    right.plot(sites, field, "o-", ms=3, color="C3")
    right.set(xlabel="j - i", title=f"OLS field: IPR {float(metrics.ipr(field)):.2f}")
    fig.suptitle(title)
    return fig
