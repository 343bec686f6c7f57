r"""The figures of the simulation chapter (``book/simulation.md``): M2 on every data model.

Settings (module constants, which the chapter quotes): :data:`EVO` and :data:`EVO_MODELS` (the six
models), :data:`FIG5` (paper Fig. 5 at the chapter's scale), :data:`PD` (the phase diagram).

* :func:`draw_field_grid`, :func:`draw_ipr_vs_kurtosis`, :func:`draw_phase_diagram` — the drawing;
* :func:`fig3_fields_six_models`, :func:`fig5_ipr_vs_kurtosis`, :func:`phase_diagram` — the
  registered builders (``python -m localization figures``), which the chapter calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from localization import book, data, plotting
from localization import experiments as ex
from localization import validation as v
from localization.experiments import Fig5Result, IPRSweep, PhaseDiagram
from localization.figures.registry import Built, check_scale, new_figure, register

__all__ = [
    "N",
    "EVO",
    "EVO_PAPER",
    "EVO_MODELS",
    "EVO_GROUPS",
    "FIG5",
    "LINTHRESH",
    "PD",
    "PD_PAPER",
    "SixModels",
    "draw_field_grid",
    "draw_ipr_vs_kurtosis",
    "draw_phase_diagram",
    "fig3_fields_six_models",
    "fig5_ipr_vs_kurtosis",
    "phase_diagram",
]

#: Input size of every experiment of the chapter (paper: N = 40).
N = 40
#: Training of the six models (chapter scale) and the paper's Fig. 3 code's batch and steps.
EVO = dict(lr=0.05, batch=1000, steps=1000, inits=8, checkpoints=41)
EVO_PAPER = {**EVO, "batch": 10_000, "steps": 2000}
#: Label → (family, parameter) of ``data.family_task``, ξ = (1, 3).
EVO_MODELS = {
    "Ising": ("Ising", 0.7),
    "NLGP(g=100)": ("NLGP", 100.0),
    "NLGP(g=0.01)": ("NLGP", 0.01),
    "Kur(k=10)": ("Kur", 10.0),
    "Kur(k=5)": ("Kur", 5.0),
    "Gaussian clone of NLGP(100)": ("Gaussian clone of NLGP", 100.0),
}
#: Tasks of one family share a pytree structure and train in one vmapped call.
EVO_GROUPS = [["NLGP(g=100)", "NLGP(g=0.01)"], ["Kur(k=10)", "Kur(k=5)"], ["Ising"], ["Gaussian clone of NLGP(100)"]]
#: Paper Fig. 5 at the chapter's scale: the paper's settings with batch 1000 and 4000 steps.
FIG5 = ex.PAPER_FIG5.replace(batch=1000, steps=4000, checkpoints=41)
#: The horizontal axis of Fig. 5 is linear on [-LINTHRESH, LINTHRESH], logarithmic outside.
LINTHRESH = 2.0
#: The phase diagram: Kur exponents, length-scale ratios ξ₁/ξ₀, ξ₀ and training (learning rate 0.1).
PD = dict(
    ks=(4.5, 5.0, 5.4, 6.1, 7.0, 10.0, 50.0),
    ratios=(1.4, 2.0, 3.0, 5.0),
    xi0=0.5,
    inits=4,
    batch=250,
    steps=2000,
    checkpoints=11,
)
PD_PAPER = {**PD, "inits": 30, "batch": 5000, "steps": 10_000}


class SixModels(NamedTuple):
    """The runs of :func:`fig3_fields_six_models`.

    Attributes
    ----------
    tasks : dict of str to data task
        Label (:data:`EVO_MODELS`) → its task.
    runs : dict of str to IPRSweep
        Label → a single-task sweep with the weights kept (``path``).
    """

    tasks: dict[str, Any]
    runs: dict[str, IPRSweep]


def draw_field_grid(axes: Any, runs: Mapping[str, IPRSweep]) -> Any:
    """Draw the receptive field of the first initialisation during training, one panel per run.

    Each panel is titled with the excess kurtosis and the final IPR; axis labels on the outer panels
    and one colour bar for time, below the grid.

    Parameters
    ----------
    axes : 2-D array of matplotlib Axes
        One panel per run.
    runs : mapping of str to IPRSweep
        Label → a single-task sweep computed with ``keep_weights=True``.

    Returns
    -------
    matplotlib.colorbar.Colorbar
        The time colour bar.
    """
    import matplotlib as mpl

    grid = np.asarray(axes, dtype=object)
    if grid.ndim != 2 or grid.size != len(runs):
        raise ValueError(f"axes must be a 2-D grid with one panel per run ({len(runs)}), got shape {grid.shape}")
    for label, res in runs.items():
        if not isinstance(res, IPRSweep) or res.path is None:
            raise TypeError(f"runs[{label!r}] must be an IPRSweep computed with keep_weights=True")
    for ax, (label, res) in zip(grid.flat, runs.items(), strict=True):
        plotting.plot_field_evolution(ax, res.path[0, 0], res.times, every=4, colorbar=False, xlabel="", ylabel="")
        ax.set_title(f"{label}\n$\\kappa - 3 = {res.excess_kurtosis[0]:+.2g}$, IPR {res.final_ipr[0, 0]:.2f}")
    for ax in grid[-1]:
        ax.set_xlabel("position $i$")
    for ax in grid[:, 0]:
        ax.set_ylabel("weight $w_i$")
    time_colors = mpl.cm.ScalarMappable(norm=mpl.colors.Normalize(0, res.times[-1]), cmap=plotting.TIME_CMAP)
    return grid[0, 0].figure.colorbar(time_colors, ax=grid, label="time $t$", location="bottom", shrink=0.6)


def draw_ipr_vs_kurtosis(ax: Any, result: Fig5Result, *, linthresh: float = LINTHRESH, annotate: bool = True) -> Any:
    """Draw paper Fig. 5: mean ± std over initialisations of the final IPR against the excess kurtosis.

    NLGP (circles) and Kur (open squares); dotted: random-vector IPR 3/(N+2); dashed: sinusoid
    3/(2N). The horizontal axis is linear on [-linthresh, linthresh] and logarithmic outside.

    Parameters
    ----------
    ax : matplotlib Axes
        The panel.
    result : Fig5Result
        From ``experiments.fig5``.
    linthresh : float
        Half-width of the linear part of the horizontal axis (> 0).
    annotate : bool
        Label Kur(4.1, 5, 6.1, 7.7, 50) right of their points and three NLGP gains left of theirs.

    Returns
    -------
    matplotlib Axes
        ``ax``.
    """
    if not isinstance(result, Fig5Result):
        raise TypeError(f"result must be a Fig5Result, got {type(result).__name__}")
    linthresh = v.positive("linthresh", linthresh)
    n = result.settings.n
    for sweep, label, marker in [(result.nlgp, "NLGP($g$)", "o"), (result.kur, "Kur($k$)", "s")]:
        ax.errorbar(
            sweep.excess_kurtosis,
            sweep.mean,
            yerr=sweep.std,
            fmt=marker,
            ms=5,
            capsize=3,
            label=label,
            mfc="none" if marker == "s" else None,
        )
    ax.axvline(0, color="0.3", lw=1)
    ax.axhline(3 / (n + 2), color="0.4", ls=":", lw=1)
    ax.axhline(3 / (2 * n), color="0.4", ls="--", lw=1)
    ax.set_xscale("symlog", linthresh=linthresh, linscale=2.5)
    ax.set_xlim(-2.2, 40)
    ticks = [-2, -1, 0, 1, 2, 5, 10, 20]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("excess kurtosis of the marginals (exact)")
    ax.set_ylabel("final IPR")
    ax.legend(loc="upper right")
    if annotate:
        nlgp_values = result.nlgp.params[[2, 3, -1]] if result.nlgp.params.size > 3 else result.nlgp.params
        labels = [(result.kur, [4.1, 5.0, 6.1, 7.7, 50.0], "k={:g}"), (result.nlgp, nlgp_values, "g={:.2g}")]
        for sweep, values, fmt in labels:
            for p in values:
                i = int(np.argmin(np.abs(sweep.params - p)))
                # NLGP labels left of their points (Kur's are right of theirs), unless at the left edge
                left = sweep is result.nlgp and sweep.excess_kurtosis[i] > -1.5
                ax.annotate(
                    fmt.format(sweep.params[i]),
                    (sweep.excess_kurtosis[i], sweep.mean[i]),
                    textcoords="offset points",
                    xytext=(-7 if left else 7, 4),
                    ha="right" if left else "left",
                    va="bottom",
                )
    return ax


def draw_phase_diagram(ax: Any, pd: PhaseDiagram, n: int) -> Any:
    """Draw the mean final IPR of a phase diagram over excess kurtosis × length-scale ratio.

    Columns ordered by excess kurtosis, rows by length-scale ratio, logarithmic colours from the
    sinusoid level 3/(2N) to 1, each cell's value printed, and a red line at zero excess kurtosis
    (placed linearly in kurtosis between the last negative and the first positive column).

    Parameters
    ----------
    ax : matplotlib Axes
        The panel.
    pd : PhaseDiagram
        From ``experiments.phase_diagram``.
    n : int
        Input size (sets the lower colour limit 3/(2n)).

    Returns
    -------
    matplotlib.colorbar.Colorbar
        The colour bar.
    """
    from matplotlib.colors import LogNorm

    if not isinstance(pd, PhaseDiagram):
        raise TypeError(f"pd must be a PhaseDiagram, got {type(pd).__name__}")
    order = np.argsort(pd.excess_kurtosis)
    cols = np.arange(len(order))
    im = ax.imshow(
        pd.mean[:, order], origin="lower", aspect="auto", cmap="viridis", norm=LogNorm(vmin=3 / (2 * n), vmax=1.0)
    )
    for r in range(len(pd.ratios)):
        for c, j in enumerate(order):
            value = pd.mean[r, j]
            ax.text(c, r, f"{value:.2f}", ha="center", va="center", color="w" if value < 0.3 else "k")
    e_sorted = pd.excess_kurtosis[order]
    negative = np.flatnonzero(e_sorted < 0)
    if negative.size and negative.max() + 1 < len(e_sorted):
        c0 = int(negative.max())
        x0 = c0 + (0 - e_sorted[c0]) / (e_sorted[c0 + 1] - e_sorted[c0])
        ax.axvline(x0, color="r", lw=2)
        ax.text(x0, len(pd.ratios) - 0.45, " excess kurtosis 0", color="r", va="bottom")
    ax.set_xticks(cols, [f"{e:+.2f}\nk={k:g}" for e, k in zip(e_sorted, pd.ks[order], strict=True)])
    ax.set_yticks(range(len(pd.ratios)), [f"{r:g}" for r in pd.ratios])
    ax.grid(False)
    ax.set_xlabel("excess kurtosis of Kur(k)")
    ax.set_ylabel(r"length-scale ratio $\xi_1/\xi_0$")
    cbar = ax.figure.colorbar(im, ax=ax, label="final IPR (mean)")
    cbar.set_ticks([0.04, 0.07, 0.1, 0.2, 0.5, 1.0], labels=["0.04", "0.07", "0.1", "0.2", "0.5", "1"])
    return cbar


@register("fig3_fields_six_models", "simulation")
def fig3_fields_six_models(scale: str = "chapter") -> Built:
    """Build M2's receptive field during training on six tasks, in the style of paper Fig. 3.

    Ising, NLGP(100), NLGP(0.01), Kur(10), Kur(5), the Gaussian clone of NLGP(100), from one
    initialisation (ξ = (1, 3), N = 40, lr 0.05, 8 initialisations). Chapter: batch 1000, 1000
    steps; paper: batch 10 000, 2000 steps (the paper's Fig. 3 code; it used batch 500 for Ising, for
    its sampler's cost).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        :data:`EVO` or :data:`EVO_PAPER` (book key ``("simulation", "evo")``).

    Returns
    -------
    Built
        The figure and a :class:`SixModels`.
    """
    settings = EVO_PAPER if check_scale(scale) == "paper" else EVO
    tasks = {label: data.family_task(*spec) for label, spec in EVO_MODELS.items()}
    runs = ex.grouped_ipr_sweep(book.key("simulation", "evo"), tasks, EVO_GROUPS, n=N, **settings, keep_weights=True)
    fig = new_figure((plotting.COLUMN_WIDTH, 8.4), layout="constrained")
    draw_field_grid(fig.subplots(3, 2, sharex=True), runs)
    return Built(fig, SixModels(tasks, runs))


@register("fig5_ipr_vs_kurtosis", "simulation")
def fig5_ipr_vs_kurtosis(scale: str = "chapter") -> Built:
    """Build paper Fig. 5: final IPR of M2 against the exact excess kurtosis of NLGP(g) and Kur(k).

    Mean ± std over 30 initialisations (ξ = (0.3, 0.7), N = 40, lr 0.1). Chapter: batch 1000, 4000
    steps; paper: batch 5000, 10 000 steps (experiments.PAPER_FIG5, about 1e9 sample-steps: slow).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        :data:`FIG5` or ``experiments.PAPER_FIG5`` (book key ``("simulation", "fig5")``).

    Returns
    -------
    Built
        The figure and the ``experiments.Fig5Result`` (its ``settings`` are the settings used).
    """
    settings = ex.PAPER_FIG5 if check_scale(scale) == "paper" else FIG5
    result = ex.fig5(book.key("simulation", "fig5"), settings)
    fig = new_figure((plotting.COLUMN_WIDTH, 4.6), layout="constrained")
    draw_ipr_vs_kurtosis(fig.subplots(), result, linthresh=LINTHRESH)
    return Built(fig, result)


@register("phase_diagram", "simulation")
def phase_diagram(scale: str = "chapter") -> Built:
    """Build the phase diagram (beyond the paper): final IPR of M2 over Kur(k) × length-scale ratio.

    7 exponents k × 4 ratios ξ₁/ξ₀ (ξ₀ = 0.5), N = 40, lr 0.1. Chapter: 4 initialisations, batch 250,
    2000 steps; paper: the paper's Fig. 5 training settings (30 initialisations, batch 5000, 10 000
    steps).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        :data:`PD` or :data:`PD_PAPER` (book key ``("simulation", "phase")``).

    Returns
    -------
    Built
        The figure and the ``experiments.PhaseDiagram``.
    """
    s = PD_PAPER if check_scale(scale) == "paper" else PD
    pd = ex.phase_diagram(
        book.key("simulation", "phase"),
        s["ks"],
        s["ratios"],
        xi0=s["xi0"],
        n=N,
        inits=s["inits"],
        batch=s["batch"],
        steps=s["steps"],
        checkpoints=s["checkpoints"],
    )
    fig = new_figure((plotting.COLUMN_WIDTH, 4.4), layout="constrained")
    draw_phase_diagram(fig.subplots(), pd, N)
    return Built(fig, pd)
