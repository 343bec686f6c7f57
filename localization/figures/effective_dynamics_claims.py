r"""The effective-dynamics chapter's figures of the paper's claims: the peak count and Claim 3.2.

Each figure is one registered builder, called by the chapter (``book/effective_dynamics.md``) and
by ``python -m localization figures``, with its settings (module constants), keys, computation and
drawing (:mod:`localization.figures.sgd_vs_flow`); the chapter's paper Figs. 3 and 8 are in
:mod:`localization.figures.effective_dynamics`, whose runs and settings these start from:

* :func:`peak_failures` — the peak count's initialisations whose SGD and flow peaks differ by more
  than one position (:class:`PeakCount`; paper §4.2's "26 of 28");
* :func:`kurtosis_threshold` — Claim 3.2 in simulation: the final IPR of SGD and the flow along the
  NLGP and Kur sweeps (:class:`KurtosisSweep`).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from localization import book, data, field_analysis, metrics, plotting, train
from localization.experiments import effective_dynamics as cmp
from localization.figures.effective_dynamics import (
    CHAPTER,
    LR,
    STEPS,
    XI_SHORT,
    Fig3Runs,
    fig3_sgd_vs_flow,
    initial_weights,
)
from localization.figures.registry import Built, check_scale, new_figure, register
from localization.figures.sgd_vs_flow import (
    draw_kurtosis_threshold,
    draw_peak_failures,
    peak_failure_rows,
    peak_failures_of,
)

__all__ = [
    "PEAK_GAINS",
    "PEAK_XI",
    "PEAK_BATCH",
    "PeakCount",
    "peak_count",
    "peak_failures",
    "CLAIM_GAINS",
    "CLAIM_KS",
    "CLAIM_RUN",
    "CLAIM_BATCH",
    "CLAIM_INITS",
    "KurtosisSweep",
    "first_most_localized",
    "kurtosis_sweep",
    "kurtosis_threshold",
    "PeakMeasures",
    "peak_measures",
    "excess_kurtosis_at",
]

#: The peak count's NLGP gains and length-scales (the paper's code's setting) and SGD batch.
PEAK_GAINS, PEAK_XI, PEAK_BATCH = (1.1, 3.0), (1.0, 2.0), 2000
#: Claim 3.2's sweeps (ξ = :data:`~localization.figures.effective_dynamics.XI_SHORT`): NLGP gains, Kur
#: exponents, run settings, SGD batch, initialisations (the first of Fig. 3's).
CLAIM_GAINS = np.logspace(-1, 1, 9)
CLAIM_KS = np.array([4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 8.0, 10.0, 20.0])
CLAIM_RUN = dict(lr=0.1, steps=3000, checkpoints=[3000])
CLAIM_BATCH, CLAIM_INITS = 500, 4


class PeakCount(NamedTuple):
    """The final fields of the peak count (paper §4.2's "26 of 28"), :func:`peak_count`.

    Attributes
    ----------
    final : dict of str to (array, array)
        "Ising" (Fig. 3's runs), "NLGP(1.1)", "NLGP(3)" (ξ = :data:`PEAK_XI`) → the final SGD and
        exact-φ flow fields of the 30 initialisations, each (INITS, N).
    agree : dict of str to PeakAgreement
        The same names → :func:`localization.field_analysis.peak_agreement` (tolerance 1).
    """

    final: dict[str, tuple[Any, Any]]
    agree: dict[str, field_analysis.PeakAgreement]


def peak_count(scale: str = "chapter", *, fig3: Fig3Runs | None = None) -> PeakCount:
    """Run the peak count: SGD and the exact-φ flow from Fig. 3's 30 initialisations, final fields.

    Ising: Fig. 3's runs; NLGP(1.1) and NLGP(3) at ξ = (1, 2) (the paper's code's setting): SGD (book
    key ``(CHAPTER, "peaks-nlgp")``, batch :data:`PEAK_BATCH`) and the flow, lr 0.05, 2000 steps.

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The scale of Fig. 3's runs (ignored when ``fig3`` is given).
    fig3 : Fig3Runs, optional
        The runs of :func:`fig3_sgd_vs_flow` (``fig3_sgd_vs_flow().data``); computed when not given.

    Returns
    -------
    PeakCount
        The final fields and their peak agreement.
    """
    check_scale(scale)
    if fig3 is None:
        fig3 = fig3_sgd_vs_flow(scale).data
    elif not isinstance(fig3, Fig3Runs):
        raise TypeError(f"fig3 must be a Fig3Runs (fig3_sgd_vs_flow().data), got {type(fig3).__name__}")
    names = [f"NLGP({g:g})" for g in PEAK_GAINS]
    tasks = [data.family_task("NLGP", g, xi=PEAK_XI) for g in PEAK_GAINS]
    run = dict(lr=LR, steps=STEPS, checkpoints=[STEPS])
    sgd = train.train_sweep(book.key(CHAPTER, "peaks-nlgp"), tasks, fig3.w0, batch=PEAK_BATCH, balanced=True, **run)
    flow = cmp.flow_sweep(tasks, fig3.w0, **run)
    ising = fig3.runs["Ising"]
    final = {"Ising": (ising.sgd.weights[:, -1], ising.flow.weights[:, -1])}
    final.update({name: (sgd.weights[p, :, -1], flow.weights[p, :, -1]) for p, name in enumerate(names)})
    agree = {name: field_analysis.peak_agreement(s, f, tol=1) for name, (s, f) in final.items()}
    return PeakCount(final, agree)


@register("peak_failures", CHAPTER)
def peak_failures(scale: str = "chapter", *, fig3: Fig3Runs | None = None) -> Built:
    """Draw every initialisation of the peak count whose SGD and flow peaks differ by more than one position.

    The final unit-norm fields (SGD black, exact-φ flow red dashes) of :func:`peak_count` (Ising J = (0.3,
    0.7) from Fig. 3's runs, NLGP(1.1) and NLGP(3) at ξ = (1, 2), 30 initialisations each).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The scale of Fig. 3's runs (ignored when ``fig3`` is given).
    fig3 : Fig3Runs, optional
        The runs of :func:`fig3_sgd_vs_flow`; computed when not given.

    Returns
    -------
    Built
        The figure and the :class:`PeakCount`.
    """
    count = peak_count(scale, fig3=fig3)
    rows, _ = peak_failure_rows(len(peak_failures_of(count.agree)))
    fig = new_figure((plotting.COLUMN_WIDTH, 0.9 + 2.0 * rows), layout="constrained")
    draw_peak_failures(fig, count.final, count.agree)
    return Built(fig, count)


class KurtosisSweep(NamedTuple):
    """Claim 3.2 in simulation: the final IPR along the NLGP and Kur sweeps (:func:`kurtosis_sweep`).

    Attributes
    ----------
    sweep : dict of str to dict
        "NLGP", "Kur" → ``params`` (P,) (:data:`CLAIM_GAINS`, :data:`CLAIM_KS`), ``kurt`` (P,) the exact
        excess kurtosis, ``sgd`` and ``flow`` (P, I) the final IPRs (float64), ``sgd_share`` and
        ``flow_share`` (P, I) their :func:`localization.field_analysis.localization_share` (localized:
        above :data:`localization.field_analysis.LOCALIZED_SHARE`).
    thresholds : dict of (str, str, str) to float
        ``(family, "sgd" | "flow", "onset" | "0.5")`` → the parameter where the mean IPR first doubles
        its value at the first parameter, or crosses 0.5 (:func:`localization.metrics.first_crossing`,
        log-interpolated in g; NaN: never); ``(family, "sgd" | "flow", "localized")`` → the first
        parameter of the grid at which most fields (more than half) are localized
        (:func:`localization.field_analysis.is_localized`; NaN: at none).
    k_star : float
        Kur's sign change of the excess kurtosis (:func:`localization.data.kur_excess_kurtosis_zero`).
    """

    sweep: dict[str, dict[str, np.ndarray]]
    thresholds: dict[tuple[str, str, str], float]
    k_star: float


def first_most_localized(params: Any, shares: Any) -> float:
    """Return the first parameter of a sweep at which more than half of the fields are localized.

    Parameters
    ----------
    params : array_like, shape (P,)
        The sweep's parameter values, in sweep order.
    shares : array_like, shape (P, I)
        :func:`localization.field_analysis.localization_share` of the I fields at each parameter
        (localized: above :data:`localization.field_analysis.LOCALIZED_SHARE`).

    Returns
    -------
    float
        The first ``params[p]`` with more than I/2 localized fields; NaN when there is none.

    Raises
    ------
    ValueError
        Shapes that do not match, or non-finite values.
    """
    params = np.asarray(params, dtype=np.float64)
    shares = np.asarray(shares, dtype=np.float64)
    if params.ndim != 1 or shares.ndim != 2 or shares.shape[0] != params.shape[0] or shares.shape[1] == 0:
        raise ValueError(f"params must be (P,) and shares (P, I), I >= 1, got {params.shape} and {shares.shape}")
    if not (np.all(np.isfinite(params)) and np.all(np.isfinite(shares))):
        raise ValueError("params and shares must be finite")
    most = np.mean(shares > field_analysis.LOCALIZED_SHARE, axis=1) > 0.5
    return float(params[np.argmax(most)]) if most.any() else math.nan


def kurtosis_sweep(scale: str = "chapter") -> KurtosisSweep:
    """Run Claim 3.2's sweeps: SGD and the exact-φ flow on NLGP(g) and Kur(k), ξ = (0.3, 0.7).

    The first :data:`CLAIM_INITS` of Fig. 3's initialisations, SGD (book key ``(CHAPTER, "claim-sweep",
    j)``, batch :data:`CLAIM_BATCH`) and the flow (φ tabulated on 1025 points: error < 2e-5, far below
    the SGD noise), lr 0.1, 3000 steps (:data:`CLAIM_RUN`), the same at both scales.

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The same sweeps at both scales.

    Returns
    -------
    KurtosisSweep
        The final IPRs and the thresholds.
    """
    check_scale(scale)
    w0 = initial_weights()[:CLAIM_INITS]
    sweep = {}
    for j, (fam, params) in enumerate((("NLGP", CLAIM_GAINS), ("Kur", CLAIM_KS))):
        tasks = [data.family_task(fam, float(p), xi=XI_SHORT) for p in params]
        s = train.train_sweep(
            book.key(CHAPTER, "claim-sweep", j), tasks, w0, batch=CLAIM_BATCH, balanced=True, **CLAIM_RUN
        )
        f = cmp.flow_sweep(tasks, w0, table=1025, **CLAIM_RUN)
        sweep[fam] = dict(
            params=params,
            kurt=np.array([t.model1.marginal.excess_kurtosis for t in tasks]),
            sgd=np.asarray(metrics.ipr(s.weights[:, :, -1]), dtype=np.float64),
            flow=np.asarray(metrics.ipr(f.weights[:, :, -1]), dtype=np.float64),
            sgd_share=field_analysis.localization_share(np.asarray(s.weights[:, :, -1], dtype=np.float64)),
            flow_share=field_analysis.localization_share(np.asarray(f.weights[:, :, -1], dtype=np.float64)),
        )
    thresholds = {}
    for fam, r in sweep.items():
        log = fam == "NLGP"
        for which in ("sgd", "flow"):
            mean = r[which].mean(1)
            thresholds[fam, which, "onset"] = metrics.first_crossing(
                r["params"], mean, 2 * mean[0], direction="either", log=log
            )
            thresholds[fam, which, "0.5"] = metrics.first_crossing(r["params"], mean, 0.5, direction="either", log=log)
            thresholds[fam, which, "localized"] = first_most_localized(r["params"], r[f"{which}_share"])
    return KurtosisSweep(sweep, thresholds, data.kur_excess_kurtosis_zero())


@register("kurtosis_threshold", CHAPTER)
def kurtosis_threshold(scale: str = "chapter") -> Built:
    """Draw Claim 3.2 in simulation: final IPR of SGD and the flow along NLGP(g) and Kur(k), and against the kurtosis.

    The sweeps of :func:`kurtosis_sweep` (9 gains, 9 exponents, ξ = (0.3, 0.7), 4 initialisations,
    batch 500, lr 0.1, 3000 steps; the same at both scales), with the crossings of 0.5 and k*.

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The same figure at both scales.

    Returns
    -------
    Built
        The figure and the :class:`KurtosisSweep`.
    """
    result = kurtosis_sweep(scale)
    fig = new_figure((plotting.COLUMN_WIDTH, 9.6), layout="constrained")
    draw_kurtosis_threshold(fig.subplots(3, 1), result.sweep, result.thresholds, result.k_star)
    return Built(fig, result)


class PeakMeasures(NamedTuple):
    """How sharp and how spread the peak count's final SGD fields are (:func:`peak_measures`).

    Attributes
    ----------
    ipr, share : dict of str to (I,) ndarray
        Setting → the final SGD fields' IPR and :func:`localization.field_analysis.localization_share`.
    distinct : int
        How many distinct peak positions the Ising SGD fields take.
    """

    ipr: dict[str, np.ndarray]
    share: dict[str, np.ndarray]
    distinct: int

    def summary(self, agree: dict[str, field_analysis.PeakAgreement]) -> str:
        """Return the counts of ``agree`` (exact / within 1 / differ by more than 1) and these measures."""
        counts = "; ".join(
            f"{name} {a.count_exact} / {a.count_within} / {np.count_nonzero(a.offset > 1)}" for name, a in agree.items()
        )
        ipr = ", ".join(f"{name} {v.min():.2f}" for name, v in self.ipr.items())
        share = ", ".join(f"{name} {v.min():.3f}" for name, v in self.share.items())
        return (
            f"measured (exact / within 1 / differ by more than 1, of 30): {counts}; {self.distinct} distinct "
            f"Ising peak positions; min final IPR of SGD {ipr}; min share {share}"
        )


def peak_measures(count: PeakCount) -> PeakMeasures:
    """Measure the peak count's final SGD fields (``peak_failures().data``).

    Parameters
    ----------
    count : PeakCount

    Returns
    -------
    PeakMeasures
    """
    if not isinstance(count, PeakCount):
        raise TypeError(f"count must be a PeakCount (peak_failures().data), got {type(count).__name__}")
    ipr = {name: np.asarray(metrics.ipr(s), dtype=np.float64) for name, (s, f) in count.final.items()}
    share = {
        name: np.asarray(field_analysis.localization_share(np.asarray(s, np.float64), np.shape(s)[-1]))
        for name, (s, f) in count.final.items()
    }
    return PeakMeasures(ipr, share, int(np.unique(count.agree["Ising"].peak1).size))


def excess_kurtosis_at(family: str, p: float) -> float:
    """Return the exact excess kurtosis of NLGP(gain = p) or Kur(k = p) (unit length-scale).

    Parameters
    ----------
    family : {"NLGP", "Kur"}
    p : float
        The gain g > 0 or the exponent k > 4; NaN (a threshold not found) gives NaN.

    Returns
    -------
    float
    """
    if family not in ("NLGP", "Kur"):
        raise ValueError(f"family must be 'NLGP' or 'Kur', got {family!r}")
    if not np.isfinite(p):
        return math.nan
    model = data.NLGP(1.0, gain=p) if family == "NLGP" else data.Kur(1.0, k=p)
    return model.marginal.excess_kurtosis
