r"""The figures of the simulation chapter (``book/simulation.md``): M2 on every data model.

Settings (module constants, which the chapter quotes): :data:`EVO` and :data:`EVO_MODELS` (the six
models), :data:`FIG5` (paper Fig. 5 at the chapter's scale), :data:`PD` (the phase diagram).

* :func:`fig3_fields_six_models`, :func:`ipr_six_models`, :func:`fig5_ipr_vs_kurtosis`,
  :func:`fig5_settling`, :func:`phase_diagram` — the registered builders (``python -m localization
  figures``), which the chapter calls: each derives its key from ``book.key``, calls the experiment
  (:mod:`localization.experiments.simulation`: ``six_models``, ``fig5``, ``settling_times``,
  ``phase_diagram``) and draws with :mod:`localization.figures.sweeps`;
* :func:`large_n_transition`, :func:`large_n_time`, :func:`large_n_near_zero`,
  :func:`data_init_variance` — beyond the paper, drawn from the records ``book/data/large_n*.json``,
  ``book/data/fig5_near_zero.json`` and ``book/data/variance_data_init.json`` (:func:`read_record`);
* :func:`paper_scale` — the recorded paper-scale Fig. 5 run (``book/data/fig5_paper_scale.json``) as
  arrays; :func:`as_recorded` — settings as a JSON record holds them;
* :func:`explore_fields` — the chapter's explorer of learned fields (:data:`WIDGET`, :data:`WIDGET_STOPS`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from matplotlib.colors import LinearSegmentedColormap
from matplotlib.ticker import NullFormatter

from localization import book, data, plotting
from localization import experiments as ex
from localization.experiments import Fig5Result
from localization.experiments.data_init import DataInit
from localization.experiments.simulation import SixModels
from localization.figures import sweeps
from localization.figures.registry import Built, check_scale, new_figure, register

__all__ = [
    "N",
    "EVO",
    "EVO_PAPER",
    "EVO_MODELS",
    "EVO_GROUPS",
    "FIG5",
    "LINTHRESH",
    "SETTLE_TOL",
    "KURTOSIS_CMAP",
    "PD",
    "PD_PAPER",
    "SixModels",
    "fig3_fields_six_models",
    "ipr_six_models",
    "fig5_ipr_vs_kurtosis",
    "fig5_settling",
    "phase_diagram",
    "LARGE_N_RECORD_PATH",
    "DATA_INIT_RECORD_PATH",
    "read_record",
    "large_n_transition",
    "large_n_time",
    "LARGE_N_NEAR_ZERO_PATHS",
    "LARGE_N_NEAR_ZERO_LONG_PATH",
    "NEAR_ZERO_RECORD_PATH",
    "LargeNNearZero",
    "near_zero_mean_paths",
    "large_n_near_zero",
    "DataInit",
    "data_init_variance",
    "as_recorded",
    "PAPER_SCALE_RECORD_PATH",
    "PAPER_SCALE_COMMAND",
    "PaperScale",
    "paper_scale",
    "WIDGET",
    "WIDGET_STOPS",
    "explore_fields",
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
#: A mean IPR curve has settled at the first checkpoint after which it stays within SETTLE_TOL times its
#: final value of that value (a relative band: the IPRs of Fig. 5 range from 0.03 to 1).
SETTLE_TOL = 0.1
#: Colours of curves by excess kurtosis (Fig. 5's settling figure): a diverging map whose ends are
#: dark (blue for -2, red for +2, CIELAB L* 20) and whose middle is a mid grey (L* 59), so that
#: every curve is visible on white and distinct from its neighbours: the
#: light-middle maps (coolwarm, RdBu) lose the curves near zero on the page, and the dark-middle
#: "berlin" of :data:`localization.plotting.SIGNED_CMAP` draws them black, where they merge.
KURTOSIS_CMAP = LinearSegmentedColormap.from_list(
    "book_kurtosis", ["#08306b", "#3f76b8", "#8f8f8f", "#d0563f", "#67000d"]
)
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


def _evo(scale: str) -> dict:
    """Return the keyword arguments of ``experiments.simulation.six_models`` at ``scale`` (N, :data:`EVO`)."""
    return dict(n=N, **(EVO_PAPER if check_scale(scale) == "paper" else EVO))


def _fig5(scale: str) -> ex.Fig5Settings:
    """Return :data:`FIG5` or ``experiments.PAPER_FIG5`` by ``scale``."""
    return ex.PAPER_FIG5 if check_scale(scale) == "paper" else FIG5


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
        The figure and an ``experiments.simulation.SixModels`` (one run per label of :data:`EVO_MODELS`).
    """
    six = ex.simulation.six_models(book.key("simulation", "evo"), EVO_MODELS, EVO_GROUPS, **_evo(scale))
    fig = new_figure((plotting.COLUMN_WIDTH, 8.4), layout="constrained")
    sweeps.draw_field_grid(fig.subplots(3, 2, sharex=True), six.runs)
    return Built(fig, six)


@register("ipr_six_models", "simulation")
def ipr_six_models(scale: str = "chapter", six: SixModels | None = None) -> Built:
    """Build the IPR of M2 during training on the six tasks of ``fig3_fields_six_models``.

    Mean ± std over the initialisations against time, on a logarithmic axis, with the random-vector
    level 3/(N+2) and the sinusoid level 3/(2N) (the runs and settings of ``fig3_fields_six_models``).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The settings of ``fig3_fields_six_models`` when ``six`` is not given.
    six : SixModels, optional
        The runs, when already computed (the chapter passes ``fig3_fields_six_models().data``).

    Returns
    -------
    Built
        The figure and the :class:`SixModels` drawn.
    """
    if six is None:
        six = ex.simulation.six_models(book.key("simulation", "evo"), EVO_MODELS, EVO_GROUPS, **_evo(scale))
    if not isinstance(six, SixModels):
        raise TypeError(f"six must be a SixModels, got {type(six).__name__}")
    fig = new_figure((plotting.COLUMN_WIDTH, 5.6), layout="constrained")
    sweeps.draw_ipr_during_training(fig.subplots(), six.runs, N)
    return Built(fig, six)


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
    result = ex.fig5(book.key("simulation", "fig5"), _fig5(scale))
    fig = new_figure((plotting.COLUMN_WIDTH, 4.6), layout="constrained")
    sweeps.draw_ipr_vs_kurtosis(fig.subplots(), result, linthresh=LINTHRESH)
    return Built(fig, result)


@register("fig5_settling", "simulation")
def fig5_settling(scale: str = "chapter", result: Fig5Result | None = None) -> Built:
    """Build the mean IPR during training for every value of the Fig. 5 sweep, coloured by excess kurtosis.

    One panel per family (NLGP, Kur); colour: the excess kurtosis on :data:`KURTOSIS_CMAP`, a
    diverging map from dark blue (-2) through mid grey (0) to dark red (+2, larger values clipped),
    every colour of it visible on the white page. Each curve's settling time is the first checkpoint
    after which it stays within :data:`SETTLE_TOL` times its final value of that value
    (``experiments.simulation.settling_times``).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The settings of ``fig5_ipr_vs_kurtosis`` when ``result`` is not given.
    result : Fig5Result, optional
        The sweep, when already computed (the chapter passes ``fig5_ipr_vs_kurtosis().data``).

    Returns
    -------
    Built
        The figure and a dict (family label, parameter) → settling time, NLGP values first.
    """
    import matplotlib as mpl
    from matplotlib.colors import TwoSlopeNorm

    if result is None:
        result = ex.fig5(book.key("simulation", "fig5"), _fig5(scale))
    settle = ex.simulation.settling_times(result, SETTLE_TOL, labels=("NLGP($g$)", "Kur($k$)"))
    fig = new_figure((plotting.COLUMN_WIDTH, 6.8), layout="constrained")
    axes = fig.subplots(2, 1, sharex=True, sharey=True)
    kurt_colors = mpl.cm.ScalarMappable(norm=TwoSlopeNorm(0.0, -2.0, 2.0), cmap=KURTOSIS_CMAP)
    for ax, sweep, family in [(axes[0], result.nlgp, "NLGP($g$)"), (axes[1], result.kur, "Kur($k$)")]:
        for e, path in zip(sweep.excess_kurtosis, sweep.ipr, strict=True):
            ax.plot(sweep.times, path.mean(axis=0), color=kurt_colors.to_rgba(min(e, 2.0)), lw=1.5)
        ax.set_title(f"{family}: mean IPR during training")
        ax.set_ylabel("IPR")
    axes[1].set_xlabel("time $t$ = steps × learning rate")
    fig.colorbar(kurt_colors, ax=axes, label="excess kurtosis (clipped at 2)", shrink=0.7)
    return Built(fig, settle)


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
    sweeps.draw_phase_diagram(fig.subplots(), pd, N)
    return Built(fig, pd)


#: The recorded large-N sweep (``python -m localization.experiments.runs large_n book/data/large_n.json``).
LARGE_N_RECORD_PATH = "book/data/large_n.json"
#: The recorded data x initialisation grid
#: (``python -m localization.experiments.runs data_init book/data/variance_data_init.json``).
DATA_INIT_RECORD_PATH = "book/data/variance_data_init.json"


def read_record(path: str) -> dict:
    """Return a JSON record of ``book/data`` (``path`` relative to the repository root, or absolute).

    Parameters
    ----------
    path : str
        The record's path.

    Returns
    -------
    dict
        The parsed JSON.
    """
    import json
    import pathlib

    if not isinstance(path, str):
        raise TypeError(f"path must be a str, got {type(path).__name__}")
    full = pathlib.Path(path)
    if not full.is_absolute():
        full = pathlib.Path(__file__).resolve().parents[2] / full
    with open(full) as f:
        return json.load(f)


def _size_colors(ns):
    import matplotlib as mpl

    cmap = mpl.colormaps["viridis"]
    return {n: cmap(0.85 * i / max(len(ns) - 1, 1)) for i, n in enumerate(ns)}


@register("large_n_transition", "simulation")
def large_n_transition(scale: str = "chapter") -> Built:
    """Build the Fig. 5 transition at several input sizes N, from the recorded large-N sweep.

    Mean ± std over initialisations of the final IPR against the excess kurtosis, one curve per N,
    NLGP (top) and Kur (bottom), ξ = (0.3, 0.7); short horizontal ticks: the random level 3/(N+2).
    Read from :data:`LARGE_N_RECORD_PATH` (the same at both scales).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        Accepted for the registry; the record is the same.

    Returns
    -------
    Built
        The figure and ``(record, summary)``, the JSON record and ``experiments.large_n_summary`` of it.
    """
    check_scale(scale)
    record = read_record(LARGE_N_RECORD_PATH)
    summary = ex.large_n.large_n_summary(record)
    colors = _size_colors([z.n for z in summary])
    fig = new_figure((plotting.COLUMN_WIDTH, 5.2), layout="constrained")
    axes = fig.subplots(2, 1, sharey=True)
    for ax, fam, label in [(axes[0], "NLGP", "NLGP($g$)"), (axes[1], "Kur", "Kur($k$)")]:
        for z in summary:
            c = colors[z.n]
            ax.errorbar(
                z.exk[fam], z.mean[fam], yerr=z.std[fam], fmt="o-", ms=4, capsize=2, color=c, label=f"N = {z.n}"
            )
            hi = z.exk[fam].max()
            ax.plot([hi + 0.02, hi + 0.1], [3 / (z.n + 2)] * 2, color=c, lw=2)
        ax.axhline(0.5, color="0.5", ls=":", lw=1)
        ax.set_title(f"{label}, $\\xi = (0.3, 0.7)$: final IPR")
        ax.set_ylabel("final IPR")
        ax.set_xlabel("excess kurtosis")
    axes[0].legend(fontsize="small", loc="upper right")
    return Built(fig, (record, summary))


@register("large_n_time", "simulation")
def large_n_time(scale: str = "chapter") -> Built:
    """Build the mean IPR during training of the most localizing NLGP gain at every recorded N.

    Left: NLGP(g = 10), ξ = (0.3, 0.7), against time; right: the same against time / N. Read from
    :data:`LARGE_N_RECORD_PATH`; the curves are ``experiments.large_n.strongest_gain_ipr`` of it.

    Parameters
    ----------
    scale : {"chapter", "paper"}
        Accepted for the registry; the record is the same.

    Returns
    -------
    Built
        The figure and the ``experiments.large_n_summary`` of the record.
    """
    check_scale(scale)
    record = read_record(LARGE_N_RECORD_PATH)
    summary = ex.large_n.large_n_summary(record)
    curves = ex.large_n.strongest_gain_ipr(record)
    fig = new_figure((plotting.COLUMN_WIDTH, 3.0), layout="constrained")
    _draw_large_n_time(fig.subplots(1, 2, sharey=True), summary, curves)
    return Built(fig, summary)


def _draw_large_n_time(axes, summary: list, curves: list) -> None:
    """Draw each size's mean IPR curve against t (``axes[0]``) and t / N (``axes[1]``)."""
    colors = _size_colors([z.n for z in summary])
    for z, curve in zip(summary, curves, strict=True):
        axes[0].plot(z.times, curve, "o-", ms=3, color=colors[z.n], label=f"N = {z.n}")
        axes[1].plot(z.times / z.n, curve, "o-", ms=3, color=colors[z.n])
    axes[0].set_xlabel("time $t$")
    axes[1].set_xlabel("$t / N$")
    axes[0].set_ylabel("mean IPR, NLGP($g$ = 10)")
    axes[0].legend(fontsize="small")


#: The N = 100 near-zero runs at batch 5000, one record per seed (0, 1, 2), and the longer run (seed 0).
LARGE_N_NEAR_ZERO_PATHS = (
    "book/data/large_n_near_zero.json",
    "book/data/large_n_near_zero_seed1.json",
    "book/data/large_n_near_zero_seed2.json",
)
LARGE_N_NEAR_ZERO_LONG_PATH = "book/data/large_n_near_zero_long.json"
#: The N = 40 near-zero record at the same batch (``experiments.near_zero``).
NEAR_ZERO_RECORD_PATH = "book/data/fig5_near_zero.json"


class LargeNNearZero(NamedTuple):
    """The records :func:`large_n_near_zero` draws.

    Attributes
    ----------
    seeds : list of dict, the N = 100 records of :data:`LARGE_N_NEAR_ZERO_PATHS` (seeds 0, 1, 2).
    long : dict, the N = 100 record at twice the horizon (:data:`LARGE_N_NEAR_ZERO_LONG_PATH`).
    n40 : dict, the N = 40 record (:data:`NEAR_ZERO_RECORD_PATH`).
    """

    seeds: list
    long: dict
    n40: dict


def near_zero_mean_paths(record: dict, family: str) -> Any:
    """Return the mean IPR during training of a near-zero record, over its seeds and initialisations.

    Parameters
    ----------
    record : dict
        A record of ``experiments.near_zero`` (e.g. :data:`NEAR_ZERO_RECORD_PATH`): ``seeds``, each
        holding ``family``'s ``ipr`` (P, I, C).
    family : {"NLGP", "Kur"}
        The family.

    Returns
    -------
    numpy.ndarray
        (P, C) float64, in the order of the record's ``gains`` or ``ks`` (at the seeds' ``times``).
    """
    import numpy as np

    if family not in ("NLGP", "Kur"):
        raise ValueError(f"family must be 'NLGP' or 'Kur', got {family!r}")
    if not isinstance(record, dict) or not record.get("seeds"):
        raise ValueError("record must be a near-zero record with at least one seed")
    return np.asarray([s[family]["ipr"] for s in record["seeds"]], dtype=np.float64).mean(axis=(0, 2))


@register("large_n_near_zero", "simulation")
def large_n_near_zero(scale: str = "chapter") -> Built:
    """Build the mean IPR during training near zero excess kurtosis at N = 40 and N = 100 (batch 5000).

    One panel per family. For the points the two sizes share (NLGP 0.14, 0.19, 0.278; Kur 5.8, 6.0,
    6.1): N = 40 dashed (the record of ``experiments.near_zero``, mean over its seeds and
    initialisations), N = 100 solid (mean over the three seeds of :data:`LARGE_N_NEAR_ZERO_PATHS`)
    and dotted to twice the horizon (seed 0); the N = 100 reference point (NLGP 0.464, Kur 7.7) in
    grey; thin lines: the random levels 3/(N+2). Logarithmic IPR axis.

    Parameters
    ----------
    scale : {"chapter", "paper"}
        Accepted for the registry; the records are the same.

    Returns
    -------
    Built
        The figure and a :class:`LargeNNearZero` of the records.
    """
    import numpy as np

    check_scale(scale)
    seeds = [read_record(p) for p in LARGE_N_NEAR_ZERO_PATHS]
    long = read_record(LARGE_N_NEAR_ZERO_LONG_PATH)
    n40 = read_record(NEAR_ZERO_RECORD_PATH)
    times100 = np.asarray(seeds[0]["sizes"][0]["times"], dtype=np.float64)
    times_long = np.asarray(long["sizes"][0]["times"], dtype=np.float64)
    times40 = np.asarray(n40["seeds"][0]["times"], dtype=np.float64)
    fig = new_figure((plotting.COLUMN_WIDTH, 5.6), layout="constrained")
    axes = fig.subplots(2, 1, sharex=True, sharey=True)
    for ax, fam, label in [(axes[0], "NLGP", "NLGP($g$)"), (axes[1], "Kur", "Kur($k$)")]:
        params = seeds[0]["sizes"][0][fam]["params"]
        mean100 = np.mean([ex.large_n.mean_ipr_paths(r, fam) for r in seeds], axis=0)
        mean_long = ex.large_n.mean_ipr_paths(long, fam)
        long_params = long["sizes"][0][fam]["params"]
        mean40 = near_zero_mean_paths(n40, fam)
        params40 = n40["settings"]["gains" if fam == "NLGP" else "ks"]
        for j, p in enumerate(long_params):
            color = f"C{j}"
            i100 = params.index(p)
            i40 = int(np.argmin(np.abs(np.asarray(params40) - p)))
            ax.plot(times100, mean100[i100], "-", color=color, lw=1.5, label=f"{p:g}")
            ax.plot(times_long, mean_long[j], ":", color=color, lw=1.2)
            ax.plot(times40, mean40[i40], "--", color=color, lw=1.2)
        ref = [i for i, p in enumerate(params) if p not in long_params]
        for i in ref:
            ax.plot(times100, mean100[i], "-", color="0.5", lw=1.5, label=f"{params[i]:g} (N = 100)")
        for n in (40, 100):
            ax.axhline(3 / (n + 2), color="0.7", lw=0.8)
        ax.set_yscale("log")
        ax.set_yticks([0.03, 0.05, 0.1, 0.2, 0.5], ["0.03", "0.05", "0.1", "0.2", "0.5"])
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_title(f"{label}: mean IPR, N = 100 solid (to $t$ = 2000 dotted), N = 40 dashed", fontsize="small")
        ax.set_ylabel("mean IPR")
        ax.legend(fontsize="x-small", ncols=2, loc="upper left")
    axes[1].set_xlabel("time $t$ = steps × learning rate")
    return Built(fig, LargeNNearZero(seeds=seeds, long=long, n40=n40))


@register("data_init_variance", "simulation")
def data_init_variance(scale: str = "chapter") -> Built:
    """Build the split of the final IPR's and the peak position's variance into data and initialisation.

    Stacked bars per Kur(k): the shares of the data streams, the initialisations and the residual
    (interaction), for the final IPR (top) and the peak site as a point on the circle (bottom). Read
    from :data:`DATA_INIT_RECORD_PATH`.

    Parameters
    ----------
    scale : {"chapter", "paper"}
        Accepted for the registry; the record is the same.

    Returns
    -------
    Built
        The figure and an ``experiments.data_init.DataInit`` (``data_init_summary`` of the record).
    """
    import numpy as np

    check_scale(scale)
    summary = ex.data_init.data_init_summary(read_record(DATA_INIT_RECORD_PATH))
    record, ipr, peak = summary.record, summary.ipr, summary.peak
    fig = new_figure((plotting.COLUMN_WIDTH, 4.6), layout="constrained")
    axes = fig.subplots(2, 1, sharex=True)
    labels = [f"Kur({k:g})\nexc. kurt. {e:+.2f}" for k, e in zip(record["ks"], record["excess_kurtosis"], strict=True)]
    x = np.arange(len(labels))
    parts = [("data", "data stream", "C0"), ("init", "initialisation", "C1"), ("residual", "residual", "0.7")]
    for ax, splits, title in [(axes[0], ipr, "final IPR"), (axes[1], peak, "peak site (on the circle)")]:
        bottom = np.zeros(len(x))
        for part, label, color in parts:
            h = np.array([sp.share(part) for sp in splits])
            ax.bar(x, h, bottom=bottom, color=color, label=label, width=0.6)
            bottom += h
        ax.set_ylabel("share of variance")
        ax.set_title(f"{title}: variance components")
        ax.set_ylim(0, 1)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside upper center", ncols=3, fontsize="small")
    axes[1].set_xticks(x, labels)
    return Built(fig, summary)


def as_recorded(settings: Any) -> Any:
    """Return a settings dataclass as a JSON record holds it (a dict; tuples become lists).

    Parameters
    ----------
    settings : dataclass instance
        E.g. ``experiments.near_zero.NEAR_ZERO`` or ``experiments.large_n.LARGE_N``.

    Returns
    -------
    dict
        ``json.loads(json.dumps(dataclasses.asdict(settings)))``.
    """
    import dataclasses
    import json

    if not dataclasses.is_dataclass(settings) or isinstance(settings, type):
        raise TypeError(f"settings must be a dataclass instance, got {type(settings).__name__}")
    return json.loads(json.dumps(dataclasses.asdict(settings)))


#: The recorded paper-scale Fig. 5 run (section c of the benchmark, :data:`PAPER_SCALE_COMMAND`).
PAPER_SCALE_RECORD_PATH = "book/data/fig5_paper_scale.json"
#: The command that writes :data:`PAPER_SCALE_RECORD_PATH`.
PAPER_SCALE_COMMAND = (
    ".venv/bin/python benchmarks/bench.py --only c --fig5-steps 6000 --fig5-record book/data/fig5_paper_scale.json"
)


class PaperScale(NamedTuple):
    """The paper-scale record as arrays, NLGP values first, then Kur (:func:`paper_scale`).

    Attributes
    ----------
    record : dict, the JSON record; settings : dict, its ``settings``; families : [NLGP, Kur] entries.
    values, excess_kurtosis, mean, std : (P,) family parameter, exact excess kurtosis (``inf``
        where the record holds ``null``), final mean and standard deviation of the IPR over the
        initialisations.
    """

    record: dict
    settings: dict
    families: list
    values: Any
    excess_kurtosis: Any
    mean: Any
    std: Any


def paper_scale(path: str = PAPER_SCALE_RECORD_PATH) -> PaperScale:
    """Read the recorded paper-scale Fig. 5 run (batch 5000; ``python`` :data:`PAPER_SCALE_COMMAND`).

    Parameters
    ----------
    path : str
        The record (relative to the repository root, or absolute).

    Returns
    -------
    PaperScale
    """
    import math

    import numpy as np

    rec = read_record(path)
    fams = [rec["families"]["NLGP"], rec["families"]["Kur"]]

    def flat(key, none=None):
        return np.array([none if v is None else v for f in fams for v in f[key]], dtype=np.float64)

    return PaperScale(
        record=rec,
        settings=rec["settings"],
        families=fams,
        values=flat("values"),
        excess_kurtosis=flat("excess_kurtosis", math.inf),
        mean=flat("final_mean_ipr"),
        std=flat("final_std_ipr"),
    )


#: Settings of the explorer's runs (shorter than the figures').
WIDGET = dict(lr=0.05, batch=500, steps=500, checkpoints=11, inits=1)
#: The explorer's slider stops, by parameter.
WIDGET_STOPS = {
    "gain": (0.1, 1.0, 3.0, 10.0, 100.0),
    "k": (4.5, 5.0, 6.0, 8.0, 10.0, 30.0),
    "J1": (0.35, 0.5, 0.7, 1.0, 1.5),
}
_SLIDER = {"NLGP": "gain", "Gaussian clone of NLGP": "gain", "Kur": "k", "Ising": "J1"}


def _widget_task(family: str, param: float):
    """Return the family's task; for the clone, a ``data.CovarianceTask`` with its covariances.

    Its covariances are traced leaves: unlike the clone's own task, whose covariance is static, it
    trains at every gain in one compiled run.
    """
    task = data.family_task(family, param)
    return data.CovarianceTask(*task.covariances(N)) if family == "Gaussian clone of NLGP" else task


def explore_fields(key: Any) -> Any:
    """Show the explorer of the field M2 learns, for any data family and parameter stop.

    One :func:`experiments.ipr_sweep` per family (all of :data:`WIDGET_STOPS` of its slider, settings
    :data:`WIDGET`, ``N`` = :data:`N`), computed when the family is first shown.

    Parameters
    ----------
    key : jax PRNG key
        The runs' key (the chapter's ``book.key(CH, "widget")``).

    Returns
    -------
    What ``explorer.explore`` returns.
    """
    import functools

    import matplotlib.pyplot as plt

    from localization.book import explorer

    if key is None:
        raise TypeError("key must be a jax PRNG key, got None")

    @functools.cache
    def family_runs(family):
        params = WIDGET_STOPS[_SLIDER[family]]
        tasks = [_widget_task(family, p) for p in params]
        return ex.ipr_sweep(key, tasks, params=params, n=N, keep_weights=True, **WIDGET)

    def field_figure(family="NLGP", gain=100.0, k=10.0, J1=0.7):
        param = {"gain": gain, "k": k, "J1": J1}[_SLIDER[family]]
        res, i = family_runs(family), WIDGET_STOPS[_SLIDER[family]].index(param)
        fig, ax = plt.subplots(figsize=(plotting.COLUMN_WIDTH, 0.5 * plotting.COLUMN_WIDTH))
        plotting.plot_field_evolution(ax, res.path[i, 0], res.times)
        ax.set_title(
            f"{family}, {data.FAMILIES[family]} = {param:g}\nexcess kurtosis "
            f"{res.excess_kurtosis[i]:+.2f}, final IPR {res.final_ipr[i, 0]:.2f}"
        )
        return fig

    stops = WIDGET_STOPS
    return explorer.explore(
        field_figure,
        alt=(
            "The weights M2 learns against input position, one curve per checkpoint of training, from "
            "light green (early) to dark purple (late); the title gives the data family, its parameter, "
            "the excess kurtosis and the final IPR."
        ),
        family=explorer.Choice(list(data.FAMILIES), value="NLGP", description="data family"),
        gain=explorer.Slider(stops["gain"], value=100.0, description="gain g"),
        k=explorer.Slider(stops["k"], value=10.0, description="kurtosis parameter k"),
        J1=explorer.Slider(stops["J1"], value=0.7, description="Ising coupling J₁"),
        when={
            "gain": {"family": ("NLGP", "Gaussian clone of NLGP")},
            "k": {"family": "Kur"},
            "J1": {"family": "Ising"},
        },
    )
