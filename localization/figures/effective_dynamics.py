r"""The effective-dynamics chapter's figures (``book/effective_dynamics.md``: the flow beside SGD).

Each figure is one registered builder, called by the chapter and by ``python -m localization figures``,
holding the chapter's settings (module constants), its keys (:func:`localization.book.key`), its
computation and its drawing; it returns a :class:`~localization.figures.registry.Built` whose data
the chapter's checks read:

* :func:`fig3_sgd_vs_flow` — paper Fig. 3: SGD, the exact-φ flow and the Taylor-φ flow from the same
  initial weights (:class:`Fig3Runs`: all 30 initialisations, which the chapter's mode statistics
  and peak count use);
* :func:`fig8_breakdown`, :func:`fig8_snapshots` — paper Fig. 8: where the flow and SGD part
  (:class:`Breakdown`, computed once and passed to the second figure).

The chapter's two other figures, the peak count (paper §4.2) and Claim 3.2 in simulation, are in
:mod:`localization.figures.effective_dynamics_claims`.

The drawing functions are those of :mod:`localization.figures.sgd_vs_flow` (the chapter's figures only).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import numpy as np

from localization import book, data, field_analysis, initialisation, metrics, plotting, train
from localization.experiments import effective_dynamics as cmp
from localization.experiments import step_size
from localization.figures.registry import Built, check_scale, new_figure, register
from localization.figures.sgd_vs_flow import draw_breakdown, draw_breakdown_snapshots, draw_sgd_vs_flow
from localization.theory import assumptions
from localization.trajectory import Trajectory

__all__ = [
    "CHAPTER",
    "N",
    "XI",
    "LR",
    "STEPS",
    "INITS",
    "FIG3_BATCH",
    "XI_SHORT",
    "FIG8",
    "Fig3Runs",
    "Breakdown",
    "fig3_tasks",
    "initial_weights",
    "fig3_sgd_vs_flow",
    "breakdown",
    "fig8_breakdown",
    "fig8_snapshots",
    "LR_SCALE_RECORD_PATH",
    "lr_scale_keys",
    "record_lr_scale",
    "LrScale",
    "lr_scale_record",
    "lr_scale",
    "Fig3Measures",
    "fig3_measures",
    "ModeStatistics",
    "mode_statistics",
    "BreakdownMeasures",
    "breakdown_measures",
    "breakdown_summary",
    "DriftTest",
    "drift_test",
    "circulant_spectrum",
    "amplifier_elasticity",
]

#: The chapter's name: the first label of its keys.
CHAPTER = "effective_dynamics"
#: Ring size and length-scales (ξ₀, ξ₁) of the paper's Fig. 3.
N, XI = 40, (1.0, 3.0)
#: Learning rate (the flow's step) and steps of Fig. 3 (t = 100).
LR, STEPS = 0.05, 2000
#: Initialisations of Fig. 3's runs (the figure shows the first; the chapter's statistics use all).
INITS = 30
#: Batch of Fig. 3's SGD runs at each scale: Ising, and the other two models.
FIG3_BATCH = {"chapter": {"Ising": 2000, "other": 1000}, "paper": {"Ising": 500, "other": 10_000}}
#: Length-scales of Fig. 8 (and of the chapter's sweeps): both short.
XI_SHORT = (0.3, 0.7)
#: Fig. 8's settings at each scale (the same horizon t = 60): ring size, batch, learning rate, steps,
#: checkpoints, initialisations on NLGP(100).
FIG8 = {
    "chapter": dict(n=40, batch=8000, lr=0.05, steps=1200, checkpoints=121, inits=4),
    "paper": dict(n=100, batch=50_000, lr=0.01, steps=6000, checkpoints=121, inits=4),
}


class Fig3Runs(NamedTuple):
    """The runs of :func:`fig3_sgd_vs_flow`.

    Attributes
    ----------
    tasks : dict of str to LengthscaleTask
        "Ising" (J = (0.3, 0.7)), "NLGP(0.01)" and "Kur(5)" (ξ = :data:`XI`).
    w0 : jax.Array, shape (INITS, N)
        The initial weights (book key ``(CHAPTER, "peaks-w0")``, scale 1e-3).
    runs : dict of str to Comparison
        Task name → SGD, exact-φ and Taylor-φ flows from all of ``w0`` (weights (INITS, C, N), 41
        checkpoints).
    first : dict of str to Comparison
        The same of the first initialisation only (weights (C, N)): what the figure shows.
    """

    tasks: dict[str, data.LengthscaleTask]
    w0: jax.Array
    runs: dict[str, cmp.Comparison]
    first: dict[str, cmp.Comparison]


def fig3_tasks() -> dict[str, data.LengthscaleTask]:
    """Return the data models of the paper's Fig. 3: Ising J = (0.3, 0.7), NLGP(0.01), Kur(5) at ξ = (1, 3).

    Returns
    -------
    dict of str to LengthscaleTask
        Name → task, in the figure's row order.
    """
    return {
        "Ising": data.LengthscaleTask(data.Ising(0.3), data.Ising(0.7)),
        "NLGP(0.01)": data.LengthscaleTask.of(data.NLGP, xi=XI, gain=0.01),
        "Kur(5)": data.LengthscaleTask.of(data.Kur, xi=XI, k=5.0),
    }


def initial_weights() -> jax.Array:
    """Return the chapter's 30 initialisations (book key ``(CHAPTER, "peaks-w0")``, scale 1e-3).

    Returns
    -------
    jax.Array, shape (INITS, N)
        Fig. 3's initial weights, which the peak count and Claim 3.2's sweeps start from too.
    """
    return initialisation.init_weights(book.key(CHAPTER, "peaks-w0"), N, init_scale=1e-3, num=INITS)


def _first(c: cmp.Comparison) -> cmp.Comparison:
    return c._replace(
        **{k: getattr(c, k)._replace(weights=np.asarray(getattr(c, k).weights[0])) for k in ("sgd", "flow", "taylor")}
    )


@register("fig3_sgd_vs_flow", CHAPTER)
def fig3_sgd_vs_flow(scale: str = "chapter") -> Built:
    """Draw paper Fig. 3: SGD, the exact-φ flow and the Taylor-φ flow from the same initial weights.

    Ising J = (0.3, 0.7), NLGP(0.01) and Kur(5) (ξ = (1, 3), N = 40, lr 0.05, 2000 steps), from the
    first of 30 initialisations. Chapter: batch 2000 for Ising, 1000 otherwise; paper: 500 for
    Ising, 10 000 otherwise (:data:`FIG3_BATCH`).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The settings (the batch sizes differ).

    Returns
    -------
    Built
        The figure and a :class:`Fig3Runs` (all 30 initialisations).
    """
    batch = FIG3_BATCH[check_scale(scale)]
    tasks = fig3_tasks()
    w0 = initial_weights()
    common = dict(lr=LR, steps=STEPS, checkpoints=41, balanced=True)
    runs = {
        "Ising": cmp.compare_flow_and_sgd(
            book.key(CHAPTER, "peaks-ising"), tasks["Ising"], w0, batch=batch["Ising"], **common
        )
    }
    for j, name in enumerate(["NLGP(0.01)", "Kur(5)"]):
        runs[name] = cmp.compare_flow_and_sgd(
            book.key(CHAPTER, "modes-sgd", j), tasks[name], w0, batch=batch["other"], **common
        )
    first = {name: _first(c) for name, c in runs.items()}
    fig = new_figure((plotting.COLUMN_WIDTH, 7.6), layout="constrained")
    draw_sgd_vs_flow(fig.subplots(3, 3, sharex=True, sharey="row"), first)
    return Built(fig, Fig3Runs(tasks, w0, runs, first))


class Breakdown(NamedTuple):
    """The runs and measurements of paper Fig. 8 (:func:`breakdown`).

    Attributes
    ----------
    tasks : list of LengthscaleTask
        NLGP(100) and NLGP(0.01) at ξ = :data:`XI_SHORT`.
    settings : dict
        The scale's :data:`FIG8` entry.
    w0 : jax.Array, shape (I, n)
        The initial weights (book key ``(CHAPTER, "fig8-w0")``, scale 1e-3).
    sgd, flow : localization.trajectory.Trajectory
        SGD (book key ``(CHAPTER, "fig8-sgd")``) and the exact-φ flow on both tasks, weights (2, I, C, n).
    replica : localization.trajectory.Trajectory
        An independent SGD run on NLGP(0.01) (book key ``(CHAPTER, "fig8-replica")``), weights (I, C, n).
    times : numpy.ndarray, shape (C,)
        The checkpoint times.
    ipr, lindeberg : dict of str to array, each (2, I, C)
        "sgd" and "flow" → IPR and Lindeberg ratio (A3) along the runs.
    distance : array, shape (2, I, C)
        Shape distance SGD vs flow (Eq. (eff-distance)).
    distance_replica : array, shape (I, C)
        Shape distance SGD vs the independent SGD run, NLGP(0.01).
    noise_floor : float
        median(distance_replica) / √2: SGD's distance from its mean path, if the flow is that mean.
    level : float
        Three noise floors: the break-down level.
    t_break : numpy.ndarray, shape (I,)
        First time the NLGP(100) distance exceeds ``level`` (NaN: never).
    """

    tasks: list[data.LengthscaleTask]
    settings: dict[str, Any]
    w0: jax.Array
    sgd: Trajectory
    flow: Trajectory
    replica: Trajectory
    times: np.ndarray
    ipr: dict[str, np.ndarray]
    lindeberg: dict[str, np.ndarray]
    distance: Any
    distance_replica: Any
    noise_floor: float
    level: float
    t_break: np.ndarray


def breakdown(scale: str = "chapter") -> Breakdown:
    """Run paper Fig. 8: SGD and the exact-φ flow on NLGP(g = 100) and NLGP(g = 0.01), ξ = (0.3, 0.7).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The settings :data:`FIG8` (chapter: N = 40, batch 8000, lr 0.05, 1200 steps; paper: N = 100,
        batch 50 000, lr 0.01, 6000 steps; the same horizon t = 60).

    Returns
    -------
    Breakdown
        The runs and their measurements.
    """
    settings = FIG8[check_scale(scale)]
    n, batch = settings["n"], settings["batch"]
    run = {k: settings[k] for k in ("lr", "steps", "checkpoints")}
    tasks = [data.family_task("NLGP", g, xi=XI_SHORT) for g in (100.0, 0.01)]
    w0 = initialisation.init_weights(book.key(CHAPTER, "fig8-w0"), n, init_scale=1e-3, num=settings["inits"])
    sgd = train.train_sweep(book.key(CHAPTER, "fig8-sgd"), tasks, w0, batch=batch, balanced=True, **run)
    replica = train.train_online(book.key(CHAPTER, "fig8-replica"), tasks[1], w0, batch=batch, balanced=True, **run)
    flow = cmp.flow_sweep(tasks, w0, **run)
    times = np.asarray(sgd.times)
    ipr = {"sgd": np.asarray(metrics.ipr(sgd.weights)), "flow": np.asarray(metrics.ipr(flow.weights))}
    distance = metrics.normalized_distance(sgd.weights, flow.weights)
    distance_replica = metrics.normalized_distance(sgd.weights[1], replica.weights)
    lindeberg = {
        k: np.stack(
            [
                np.asarray(assumptions.lindeberg_ratio(r.weights[p], task.covariances(n)[1]))
                for p, task in enumerate(tasks)
            ]
        )
        for k, r in (("sgd", sgd), ("flow", flow))
    }
    noise_floor = float(np.median(distance_replica)) / math.sqrt(2)
    level = 3 * noise_floor
    t_break = metrics.first_crossing(times, distance[0], level)
    return Breakdown(
        tasks, dict(settings), w0, sgd, flow, replica, times, ipr, lindeberg, distance, distance_replica,
        noise_floor, level, t_break,
    )  # fmt: skip


@register("fig8_breakdown", CHAPTER)
def fig8_breakdown(scale: str = "chapter") -> Built:
    """Draw paper Fig. 8 (left): IPR, shape distance and Lindeberg ratio of SGD and the flow along the runs.

    NLGP(g = 100) (4 initialisations, one row each) and NLGP(g = 0.01) (last row, with the SGD-vs-SGD
    noise level), ξ = (0.3, 0.7); a green line where the distance first exceeds three noise floors.
    Chapter: N = 40, batch 8000, lr 0.05, 1200 steps; paper: N = 100, batch 50 000, lr 0.01, 6000
    steps (:data:`FIG8`; the same horizon t = 60).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The settings.

    Returns
    -------
    Built
        The figure and the :class:`Breakdown` (pass it to :func:`fig8_snapshots`).
    """
    b = breakdown(scale)
    fig = new_figure((plotting.COLUMN_WIDTH, 10.5), layout="constrained")
    axes = fig.subplots(b.settings["inits"] + 1, 3, sharex=True)
    draw_breakdown(axes, b.times, b.ipr, b.distance, b.distance_replica, b.lindeberg, b.t_break, b.level)
    return Built(fig, b)


@register("fig8_snapshots", CHAPTER)
def fig8_snapshots(scale: str = "chapter", *, runs: Breakdown | None = None) -> Built:
    """Draw paper Fig. 8 (right): unit-norm fields of SGD and the flow around the break-down.

    The first NLGP(100) initialisation before and just after its break-down time and at the end, and
    the end on NLGP(0.01): the runs of :func:`fig8_breakdown`, at the same scales.

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The settings (ignored when ``runs`` is given).
    runs : Breakdown, optional
        The runs of :func:`fig8_breakdown` (``fig8_breakdown().data``); computed when not given.

    Returns
    -------
    Built
        The figure and the :class:`Breakdown` it draws.
    """
    check_scale(scale)
    if runs is None:
        runs = breakdown(scale)
    elif not isinstance(runs, Breakdown):
        raise TypeError(f"runs must be a Breakdown (fig8_breakdown().data), got {type(runs).__name__}")
    fig = new_figure((plotting.COLUMN_WIDTH, 5.0), layout="constrained")
    axes = fig.subplots(2, 2, sharex=True, sharey=True)
    draw_breakdown_snapshots(axes, runs.times, runs.sgd, runs.flow, float(runs.t_break[0]))
    return Built(fig, runs)


#: The recorded learning-rate x initial-scale sweep (written by :func:`record_lr_scale`, command
#: ``localization.experiments.step_size.RECORD_COMMAND``).
LR_SCALE_RECORD_PATH = "book/data/lr_scale_sweep.json"


def _repo_path(path):
    import pathlib

    return str(pathlib.Path(__file__).resolve().parents[2] / path)


def lr_scale_keys() -> tuple[jax.Array, jax.Array]:
    """Return the sweep's book keys: the SGD stream's and the unit-scale initial weights'.

    Returns
    -------
    tuple of jax.Array
        ``book.key(CHAPTER, "lr-scale-sgd")`` and ``book.key(CHAPTER, "lr-scale-w")``.
    """
    return book.key(CHAPTER, "lr-scale-sgd"), book.key(CHAPTER, "lr-scale-w")


def record_lr_scale(path: str | None = None) -> dict:
    """Run and write the recorded sweep (:func:`localization.experiments.step_size.record_lr_scale_sweep`).

    Under the book seed (0 for the committed record), with the keys of :func:`lr_scale_keys`.

    Parameters
    ----------
    path : str or None
        Output file (default :data:`LR_SCALE_RECORD_PATH` in the repository).

    Returns
    -------
    dict
        The record written.
    """
    book.start(CHAPTER)
    s = step_size.LR_SCALE_RECORD
    k_sgd, k_w = lr_scale_keys()
    w_unit = initialisation.init_weights(k_w, s["n"], 1.0, num=s["inits"])
    out = _repo_path(LR_SCALE_RECORD_PATH) if path is None else path
    return step_size.record_lr_scale_sweep(k_sgd, w_unit, out, seed=book.seed())


class LrScale(NamedTuple):
    """The recorded learning-rate x initial-scale sweep and its two spectral thresholds.

    Attributes
    ----------
    record : dict
        The JSON record (settings, seed, ``runs[batch]`` with (P, L, S, I) IPRs, null where diverged,
        and divergence flags), P = the gains of ``settings``.
    eta_c : (P,) ndarray
        :func:`~localization.experiments.effective_dynamics.divergence_threshold` of each task.
    fixed_point : FixedPointThreshold
        The localizing task's flow fixed point and its Euler stability limit.
    """

    record: dict
    eta_c: np.ndarray
    fixed_point: step_size.FixedPointThreshold


def lr_scale_record(path: str | None = None) -> LrScale:
    """Read the recorded sweep and compute its thresholds (deterministic, float64).

    Parameters
    ----------
    path : str or None
        The record (default :data:`LR_SCALE_RECORD_PATH`, relative to the repository root).

    Returns
    -------
    LrScale
    """
    import json

    if path is None:
        path = _repo_path(LR_SCALE_RECORD_PATH)
    with open(path) as f:
        record = json.load(f)
    s = record["settings"]
    tasks = step_size.lr_scale_tasks(s["gains"])
    eta_c = np.array([step_size.divergence_threshold(*t.covariances(s["n"])) for t in tasks])
    return LrScale(record, eta_c, step_size.fixed_point_threshold(tasks[0], s["n"]))


def _mean_ipr(values):
    a = np.array(values, dtype=np.float64)  # null -> nan
    none = np.isnan(a).all(-1)
    mean = np.where(none, np.nan, np.nansum(a, -1) / np.maximum((~np.isnan(a)).sum(-1), 1))
    return mean, none


@register("lr_scale", CHAPTER)
def lr_scale(scale: str = "chapter") -> Built:
    """Draw the final IPR against the learning rate for several initial scales, NLGP(100) and NLGP(0.01).

    From the recorded sweep (:data:`LR_SCALE_RECORD_PATH`): SGD at batch 1000 for each initial scale
    (colours), SGD at batch 8000 and the effective flow at the paper's scale 1e-3; crosses where every
    initialisation diverged; vertical lines at the divergence threshold 4/λ_max(Σ₀+Σ₁) and (top) the
    Euler stability limit of the flow's localized fixed point.

    Parameters
    ----------
    scale : {"chapter", "paper"}
        Only "chapter" (the record).

    Returns
    -------
    Built
        The figure and the :class:`LrScale`.
    """
    check_scale(scale)
    d = lr_scale_record()
    s = d.record["settings"]
    lrs, scales = np.array(s["lrs"]), np.array(s["scales"])
    runs = d.record["runs"]
    colours = plotting.TIME_CMAP(np.linspace(0.0, 1.0, len(scales)))
    fig = new_figure((plotting.COLUMN_WIDTH, 0.95 * plotting.COLUMN_WIDTH), layout="constrained")
    axes = fig.subplots(2, 1, sharex=True)
    paper = int(np.argmin(np.abs(np.log10(scales) + 3)))
    for p, ax in enumerate(axes):
        small, small_div = _mean_ipr(runs[str(s["batches"][0])]["sgd_ipr"][p])  # (L, S)
        for j, sc in enumerate(scales):
            ax.plot(lrs, small[:, j], "o-", ms=3, lw=1, color=colours[j], label=f"SGD, scale {sc:g}")
            div = small_div[:, j]
            ax.plot(lrs[div], np.full(div.sum(), 1.05 + 0.02 * j), "x", ms=4, color=colours[j])
        big, _ = _mean_ipr(runs[str(s["batches"][-1])]["sgd_ipr"][p])
        ax.plot(lrs, big[:, paper], "k:", lw=1.5, label=f"SGD, batch {s['batches'][-1]}, scale 1e-3")
        flow, _ = _mean_ipr(runs[str(s["batches"][0])]["flow_ipr"][p])
        ax.plot(lrs, flow[:, paper], "--", color="tab:red", lw=1.5, label="flow, scale 1e-3")
        ax.axvline(d.eta_c[p], color="0.4", lw=1)
        ax.text(d.eta_c[p], 0.5, r"$\eta_c$ ", color="0.3", fontsize=8, ha="right")
        if p == 0:
            ax.axvline(d.fixed_point.threshold, color="0.4", lw=1, ls="--")
            ax.text(d.fixed_point.threshold, 0.3, r" $\eta_{\rm fp}$", color="0.3", fontsize=8, ha="left")
        ax.set_xscale("log")
        ax.set_ylim(0, 1.2)
        ax.set_ylabel("final IPR (mean of 4)")
        xi = f"ξ = ({s['xi'][0]:g}, {s['xi'][1]:g})"
        ax.set_title(f"NLGP(g = {s['gains'][p]:g}), {xi}, N = {s['n']}, t = {s['t_end']:g}", fontsize=9)
    axes[-1].set_xlabel("learning rate η")
    handles, labels = axes[0].get_legend_handles_labels()
    axes[1].legend(handles, labels, fontsize=7, ncol=2, loc="center left")
    return Built(fig, d)


# -------------------------------------------------------------------------------------------------
# The chapter's measurements of its runs (what its checks and glued numbers read)
# -------------------------------------------------------------------------------------------------
_FIELDS = ("sgd", "flow", "taylor")


def _check_comparisons(name: str, value: Any) -> None:
    if not isinstance(value, dict) or not all(isinstance(c, cmp.Comparison) for c in value.values()):
        raise TypeError(f"{name} must be a dict of task name to Comparison, got {type(value).__name__}")


class Fig3Measures(NamedTuple):
    """Final fields of Fig. 3's first initialisation and their measures (:func:`fig3_measures`).

    Each attribute maps a task name ("Ising", "NLGP(0.01)", "Kur(5)") to a dict over "sgd", "flow",
    "taylor" (``dist``: "flow", "taylor" only).

    Attributes
    ----------
    final : dict
        The final fields, float64 arrays of shape (N,).
    ipr, peak, mode : dict
        Final IPR (:func:`localization.metrics.ipr`), unsigned peak position
        (:func:`localization.field_analysis.peak_position`) and dominant Fourier mode
        (:func:`localization.field_analysis.dominant_frequency`).
    dist : dict
        Shape distance of Eq. (eff-distance) from the SGD field.
    """

    final: dict[str, dict[str, np.ndarray]]
    ipr: dict[str, dict[str, float]]
    peak: dict[str, dict[str, int]]
    dist: dict[str, dict[str, float]]
    mode: dict[str, dict[str, int]]

    def summary(self) -> str:
        """Return one line per task: IPRs, peaks, dominant modes and shape distances to SGD."""

        def row(d):
            return " / ".join(f"{d[k]:.2f}" if isinstance(d[k], float) else str(d[k]) for k in _FIELDS)

        return "\n".join(
            f"{name:11s} IPR sgd/flow/taylor = {row(self.ipr[name])}   peak = {row(self.peak[name])}"
            f"   dominant Fourier mode = {row(self.mode[name])}   shape distance to SGD: flow "
            f"{self.dist[name]['flow']:.2f}, taylor {self.dist[name]['taylor']:.2f}"
            for name in self.final
        )


def fig3_measures(first: dict[str, cmp.Comparison]) -> Fig3Measures:
    """Measure the final fields of Fig. 3's first initialisation (``fig3_sgd_vs_flow().data.first``).

    Parameters
    ----------
    first : dict of str to Comparison
        Task name → SGD, exact-φ and Taylor-φ runs of one initialisation (weights (C, N)).

    Returns
    -------
    Fig3Measures
    """
    _check_comparisons("first", first)
    final = {
        name: {k: np.asarray(getattr(c, k).weights[-1], dtype=np.float64) for k in _FIELDS} for name, c in first.items()
    }
    ipr = {name: {k: float(metrics.ipr(w)) for k, w in f.items()} for name, f in final.items()}
    peak = {name: {k: int(field_analysis.peak_position(w)) for k, w in f.items()} for name, f in final.items()}
    dist = {
        name: {k: float(metrics.normalized_distance(f["sgd"], f[k])) for k in ("flow", "taylor")}
        for name, f in final.items()
    }
    mode = {name: {k: int(field_analysis.dominant_frequency(w)) for k, w in f.items()} for name, f in final.items()}
    return Fig3Measures(final, ipr, peak, dist, mode)


class ModeStatistics(NamedTuple):
    """Final fields of the NLGP(0.01) and Kur(5) runs from all initialisations (:func:`mode_statistics`).

    Each attribute but ``same`` and ``const0`` maps a family ("nlgp", "kur") to a dict over "sgd",
    "flow" (and, for "kur", "taylor") of arrays over the I initialisations.

    Attributes
    ----------
    final : dict
        Final fields, float64 (I, N).
    energy : dict
        Share of ``||w||^2`` per Fourier wave (:func:`localization.field_analysis.frequency_power`),
        (I, N/2 + 1).
    dominant : dict
        The wave with the largest share, (I,).
    ipr, share : dict
        Final IPR and :func:`localization.field_analysis.localization_share` (localized: above
        :data:`localization.field_analysis.LOCALIZED_SHARE`), (I,).
    same : dict of str to (I,) bool array
        SGD and exact-φ flow end within shape distance 0.5 (Eq. (eff-distance)).
    const0 : (I,) ndarray
        The initial fields' share of ``||w||^2`` in the constant mode.
    """

    final: dict[str, dict[str, np.ndarray]]
    energy: dict[str, dict[str, np.ndarray]]
    dominant: dict[str, dict[str, np.ndarray]]
    ipr: dict[str, dict[str, np.ndarray]]
    share: dict[str, dict[str, np.ndarray]]
    same: dict[str, np.ndarray]
    const0: np.ndarray

    def summary(self) -> str:
        """Return the dominant-mode counts, the same-shape counts and the NLGP exceptions' start."""
        counts = "; ".join(
            f"{fam} {k} {np.sum(d == 0)}, {np.sum(d == 1)}, {np.sum(d > 1)}"
            for fam, dd in self.dominant.items()
            for k, d in dd.items()
        )
        same = ", ".join(f"{fam} {np.sum(s)}" for fam, s in self.same.items())
        exceptions = ", ".join(f"{x:.2f}" for x in self.const0[~self.same["nlgp"]] / np.median(self.const0))
        return (
            f"measured: dominant mode counts (k = 0, 1, other) of {self.const0.size}: {counts}; same shape "
            f"(d < 0.5): {same}; NLGP exceptions' initial constant share / median: {exceptions}"
        )


def mode_statistics(runs: dict[str, cmp.Comparison], w0: Any) -> ModeStatistics:
    """Measure the final NLGP(0.01) and Kur(5) fields of Fig. 3's runs from all initialisations.

    Parameters
    ----------
    runs : dict of str to Comparison
        "nlgp" and "kur" → the runs of ``fig3_sgd_vs_flow().data.runs`` (weights (I, C, N)).
    w0 : array_like, shape (I, N)
        Their initial weights.

    Returns
    -------
    ModeStatistics
    """
    _check_comparisons("runs", runs)
    if set(runs) != {"nlgp", "kur"}:
        raise ValueError(f"runs must have the keys 'nlgp' and 'kur', got {sorted(runs)}")
    n = np.shape(w0)[-1]
    final = {
        fam: {
            k: np.asarray(getattr(c, k).weights[:, -1], dtype=np.float64)
            for k in (_FIELDS if fam == "kur" else ("sgd", "flow"))
        }
        for fam, c in runs.items()
    }
    energy = {fam: {k: field_analysis.frequency_power(w) for k, w in f.items()} for fam, f in final.items()}
    dominant = {fam: {k: np.argmax(e, -1) for k, e in en.items()} for fam, en in energy.items()}
    ipr = {fam: {k: np.asarray(metrics.ipr(w)) for k, w in f.items()} for fam, f in final.items()}
    share = {
        fam: {k: np.asarray(field_analysis.localization_share(w, n)) for k, w in f.items()} for fam, f in final.items()
    }
    same = {fam: metrics.normalized_distance(f["sgd"], f["flow"]) < 0.5 for fam, f in final.items()}
    const0 = field_analysis.frequency_power(w0)[:, 0]
    return ModeStatistics(final, energy, dominant, ipr, share, same, const0)


class BreakdownMeasures(NamedTuple):
    """When the Fig. 8 fields localize and where their distance peaks (:func:`breakdown_measures`).

    Attributes
    ----------
    share : dict of str to (2, I, C) ndarray
        "sgd", "flow" → :func:`localization.field_analysis.localization_share` along the runs.
    t_loc : dict of str to (I,) ndarray
        First time the NLGP(100) field is localized (inf: not within the run).
    n_loc : dict of str to int
        How many NLGP(100) runs localize within the run.
    i_max : (I,) ndarray
        Checkpoint of the largest NLGP(100) SGD-vs-flow distance.
    a3_at_max : dict of str to (I,) ndarray
        The Lindeberg ratio there.
    peaks : PeakAgreement
        Final NLGP(100) peaks of SGD and flow (tolerance 1).
    """

    share: dict[str, np.ndarray]
    t_loc: dict[str, np.ndarray]
    n_loc: dict[str, int]
    i_max: np.ndarray
    a3_at_max: dict[str, np.ndarray]
    peaks: field_analysis.PeakAgreement


def breakdown_measures(b: Breakdown) -> BreakdownMeasures:
    """Measure the Fig. 8 runs: localization times, the distance's peak, the final peaks.

    Parameters
    ----------
    b : Breakdown
        ``fig8_breakdown().data``.

    Returns
    -------
    BreakdownMeasures
    """
    if not isinstance(b, Breakdown):
        raise TypeError(f"b must be a Breakdown (fig8_breakdown().data), got {type(b).__name__}")
    n = b.settings["n"]
    share = {
        k: np.asarray(field_analysis.localization_share(np.asarray(getattr(b, k).weights, dtype=np.float64), n))
        for k in ("sgd", "flow")
    }
    t_loc = {
        k: np.nan_to_num(
            np.asarray(metrics.first_crossing(b.times, share[k][0], field_analysis.LOCALIZED_SHARE)), nan=np.inf
        )
        for k in share
    }
    n_loc = {k: int(np.sum(np.isfinite(t))) for k, t in t_loc.items()}
    i_max = np.argmax(b.distance[0], -1)
    inits = np.arange(i_max.size)
    a3_at_max = {k: b.lindeberg[k][0, inits, i_max] for k in b.lindeberg}
    peaks = field_analysis.peak_agreement(b.sgd.weights[0, :, -1], b.flow.weights[0, :, -1], tol=1)
    return BreakdownMeasures(share, t_loc, n_loc, i_max, a3_at_max, peaks)


def breakdown_summary(b: Breakdown, m: BreakdownMeasures) -> str:
    """Return the Fig. 8 measurements, one line per NLGP(100) run and one for NLGP(0.01)."""
    t, d, floor = b.times, b.distance, b.noise_floor
    rows = [
        f"init {i}: max d = {d[0, i].max():.2f} ({d[0, i].max() / floor:.1f} x floor) at "
        f"t = {t[m.i_max[i]]:.1f}, Lindeberg ratio there {m.a3_at_max['sgd'][i]:.2f} (SGD), "
        f"{m.a3_at_max['flow'][i]:.2f} (flow), initially {b.lindeberg['sgd'][0, i, 0]:.2f}; first above "
        f"3 x floor at t = {b.t_break[i]:.1f}; localized from t = {m.t_loc['sgd'][i]:.1f} (SGD), "
        f"{m.t_loc['flow'][i]:.1f} (flow); final peaks {m.peaks.peak1[i]} / {m.peaks.peak2[i]}, final "
        f"d = {d[0, i, -1]:.2f}"
        for i in range(m.i_max.size)
    ]
    rows.append(
        f"g = 0.01: noise floor (SGD vs SGD) d = {floor:.3f}, SGD vs flow: median d = {np.median(d[1]):.3f}, "
        f"max d = {d[1].max():.3f}; max IPR = {b.ipr['sgd'][1].max():.2f} (SGD), "
        f"{b.ipr['flow'][1].max():.2f} (flow); max share "
        f"{max(m.share['sgd'][1].max(), m.share['flow'][1].max()):.2f}"
    )
    return "\n".join(rows)


class DriftTest(NamedTuple):
    """The effective field against the Monte Carlo SGD drift at one weight vector (:func:`drift_test`).

    Attributes
    ----------
    ratio : dict of str to dict of str to float
        Task name → ``||MC mean - G|| / ||s.e.||`` for G = "F" (Eq. (eff-flow)), "phi not halved"
        and "(S0+S1)w not halved" (its two factor-2 variants).
    noise_rel : dict of str to dict of int to float
        Task name → batch size → the relative noise of one batch gradient,
        ``||s.d. of a batch mean|| / ||mean||``.
    """

    ratio: dict[str, dict[str, float]]
    noise_rel: dict[str, dict[int, float]]


def drift_test(tasks: dict[str, data.LengthscaleTask], w: Any, *, num: int = 2**15, batches=(500, 8000)) -> DriftTest:
    """Compare F(w) of Eq. (eff-flow) and its factor-2 variants with the Monte Carlo mean of -grad(batch MSE).

    Task ``j`` (in order) draws its examples from the book key ``(CHAPTER, "mc-drift", j)``
    (:func:`localization.experiments.effective_dynamics.monte_carlo_drift`).

    Parameters
    ----------
    tasks : dict of str to LengthscaleTask
    w : array_like, shape (n,)
        One weight vector.
    num : int
        Monte Carlo examples per task.
    batches : tuple of int
        The batch sizes whose relative noise is reported.

    Returns
    -------
    DriftTest
    """
    from localization import theory

    if not isinstance(tasks, dict) or not tasks:
        raise TypeError(f"tasks must be a non-empty dict of name to LengthscaleTask, got {type(tasks).__name__}")
    w = np.asarray(w)
    if w.ndim != 1:
        raise ValueError(f"w must be one weight vector (n,), got shape {w.shape}")
    n = w.shape[0]
    ratio, noise_rel = {}, {}
    for j, (name, task) in enumerate(tasks.items()):
        s0, s1 = task.covariances(n)
        phi = theory.amplifier_of(task.model1.marginal)
        mc = cmp.monte_carlo_drift(book.key(CHAPTER, "mc-drift", j), task, w, num=num, n=n)
        F = np.asarray(theory.effective_vector_field(w, phi, s0, s1))
        a = np.asarray(theory.amplifier_argument(w, s1))
        variants = {
            "F": F,
            "phi not halved": F + 0.5 * np.asarray(theory.evaluate_amplifier(phi, a)),
            "(S0+S1)w not halved": F - 0.5 * np.asarray((s0 + s1) @ w),
        }
        se = np.linalg.norm(mc.stderr)
        ratio[name] = {k: float(np.linalg.norm(mc.mean - G) / se) for k, G in variants.items()}
        noise_rel[name] = {B: float(se * math.sqrt(mc.num / B) / np.linalg.norm(mc.mean)) for B in batches}
    return DriftTest(ratio, noise_rel)


def circulant_spectrum(task: data.LengthscaleTask, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""Return a task's covariances and their circulant spectra: Σ₀, Σ₁, λ₁(k) and μ(k) = λ₀(k) + λ₁(k).

    Parameters
    ----------
    task : LengthscaleTask
        Its covariances on a ring of ``n`` sites are circulant.
    n : int
        Ring size.

    Returns
    -------
    s0, s1 : (n, n) ndarray
    lam1, mu : (n,) ndarray
        Eigenvalues at wave numbers k = 0, …, n - 1 (the FFT of the first row).
    """
    if not isinstance(task, data.LengthscaleTask):
        raise TypeError(f"task must be a LengthscaleTask, got {type(task).__name__}")
    s0, s1 = (np.asarray(s) for s in task.covariances(n))
    lam0, lam1 = np.real(np.fft.fft(s0[0])), np.real(np.fft.fft(s1[0]))
    return s0, s1, lam1, lam0 + lam1


def amplifier_elasticity(phi: Any, a0: float, h: float = 1e-5) -> tuple[float, float]:
    r"""Return ρ = a₀ φ'(a₀) / φ(a₀) of Eq. (eff-mode-rate) (central difference, step ``h``) and φ(a₀).

    Parameters
    ----------
    phi : amplifier
        Any φ that :func:`localization.theory.evaluate_amplifier` accepts.
    a0 : float
        In (0, 1 - h].
    h : float
        The difference step, > 0.

    Returns
    -------
    rho, phi_a0 : float
        ρ = 1 for a linear φ.
    """
    from localization.theory import evaluate_amplifier

    if not (h > 0 and 0 < a0 <= 1 - h):
        raise ValueError(f"need h > 0 and 0 < a0 <= 1 - h, got a0 = {a0}, h = {h}")
    v0, vp, vm = np.asarray(evaluate_amplifier(phi, np.array([a0, a0 + h, a0 - h])))
    return a0 * (vp - vm) / (2 * h) / v0, v0
