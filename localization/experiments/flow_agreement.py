r"""Where SGD and the effective flow end from the same start: paper Fig. 3, its modes, the peak count.

The runs and measurements of the chapter *Effective dynamics vs simulation*
(``book/effective_dynamics.md``) that compare the end states of SGD and the flow of paper Eq. (5)
from the same initial weights:

* :func:`fig3_runs` — paper Fig. 3: SGD, the exact-φ flow and the Taylor-φ flow on Ising
  J = (0.3, 0.7), NLGP(0.01) and Kur(5) (:func:`fig3_tasks`) from :data:`INITS` initialisations
  (:func:`initial_weights`), :class:`Fig3Runs`;
* :func:`fig3_measures` — the final fields of the first initialisation: IPR, peak, dominant Fourier
  mode, shape distance (Eq. (eff-distance)) to SGD;
* :func:`mode_statistics` — the final NLGP(0.01) and Kur(5) fields of all initialisations: which
  Fourier mode wins; :func:`circulant_spectrum` and :func:`amplifier_elasticity`, the two inputs of
  Eqs. (eff-modes) and (eff-mode-rate);
* :func:`peak_count` — paper §4.2's "26 of 28": do SGD and the flow put the peak at the same site
  (:class:`PeakCount`), and :func:`peak_measures`, how sharp the SGD fields are.

Randomness comes in as explicit keys (the chapter's builders derive them from the book seed); the
settings are the module constants. Time is steps × lr throughout.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import jax
import numpy as np

from localization import data, field_analysis, initialisation, metrics, theory, train
from localization.experiments import effective_dynamics as cmp

__all__ = [
    "N",
    "XI",
    "LR",
    "STEPS",
    "INITS",
    "FIG3_BATCH",
    "Fig3Runs",
    "fig3_tasks",
    "initial_weights",
    "fig3_runs",
    "Fig3Measures",
    "fig3_measures",
    "ModeStatistics",
    "mode_statistics",
    "circulant_spectrum",
    "amplifier_elasticity",
    "PEAK_GAINS",
    "PEAK_XI",
    "PEAK_BATCH",
    "PeakCount",
    "peak_count",
    "PeakMeasures",
    "peak_measures",
]

#: Ring size and length-scales (ξ₀, ξ₁) of the paper's Fig. 3.
N, XI = 40, (1.0, 3.0)
#: Learning rate (the flow's step) and steps of Fig. 3 (t = 100).
LR, STEPS = 0.05, 2000
#: Initialisations of Fig. 3's runs (the figure shows the first; the chapter's statistics use all).
INITS = 30
#: Batch of Fig. 3's SGD runs at each scale: Ising, and the other two models.
FIG3_BATCH = {"chapter": {"Ising": 2000, "other": 1000}, "paper": {"Ising": 500, "other": 10_000}}
#: The peak count's NLGP gains and length-scales (the paper's code's setting) and SGD batch.
PEAK_GAINS, PEAK_XI, PEAK_BATCH = (1.1, 3.0), (1.0, 2.0), 2000

_FIELDS = ("sgd", "flow", "taylor")


# -------------------------------------------------------------------------------------------------
# paper Fig. 3: the runs
# -------------------------------------------------------------------------------------------------
class Fig3Runs(NamedTuple):
    """The runs of :func:`fig3_runs`.

    Attributes
    ----------
    tasks : dict of str to LengthscaleTask
        "Ising" (J = (0.3, 0.7)), "NLGP(0.01)" and "Kur(5)" (ξ = :data:`XI`).
    w0 : jax.Array, shape (INITS, N)
        The initial weights (:func:`initial_weights`, scale 1e-3).
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


def initial_weights(key: jax.Array) -> jax.Array:
    """Return the chapter's :data:`INITS` initialisations on :data:`N` sites (Xavier-normal, scale 1e-3).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key (the chapter's: ``book.key("effective_dynamics", "peaks-w0")``).

    Returns
    -------
    jax.Array, shape (INITS, N)
        Fig. 3's initial weights, which the peak count and Claim 3.2's sweeps start from too.
    """
    return initialisation.init_weights(key, N, init_scale=1e-3, num=INITS)


def _first(c: cmp.Comparison) -> cmp.Comparison:
    return c._replace(**{k: getattr(c, k)._replace(weights=np.asarray(getattr(c, k).weights[0])) for k in _FIELDS})


def _check_batch(batch: Any) -> dict[str, int]:
    if not isinstance(batch, Mapping) or set(batch) != {"Ising", "other"}:
        raise ValueError(f"batch must map 'Ising' and 'other' to batch sizes (FIG3_BATCH[scale]), got {batch!r}")
    return dict(batch)


def fig3_runs(key: jax.Array, w0: Any, batch: Mapping[str, int], *, modes_key: jax.Array) -> Fig3Runs:
    """Run paper Fig. 3: SGD, the exact-φ flow and the Taylor-φ flow from the same initial weights.

    The tasks of :func:`fig3_tasks` (N = 40, lr 0.05, 2000 steps, 41 checkpoints, balanced batches),
    every initialisation of ``w0`` on one shared SGD stream per task.

    Parameters
    ----------
    key : jax.Array
        The Ising SGD stream's PRNG key.
    w0 : array_like, shape (I, N)
        Initial weights (:func:`initial_weights`).
    batch : mapping
        ``{"Ising": B, "other": B'}``: the SGD batch of the Ising row and of the other two
        (:data:`FIG3_BATCH` of a scale).
    modes_key : jax.Array
        The NLGP(0.01) and Kur(5) SGD streams' key: task ``j`` (0, 1) draws from
        ``jax.random.fold_in(modes_key, j)``.

    Returns
    -------
    Fig3Runs
        All initialisations (``runs``) and the first (``first``).
    """
    batch = _check_batch(batch)
    tasks = fig3_tasks()
    common = dict(lr=LR, steps=STEPS, checkpoints=41, balanced=True)
    runs = {"Ising": cmp.compare_flow_and_sgd(key, tasks["Ising"], w0, batch=batch["Ising"], **common)}
    for j, name in enumerate(["NLGP(0.01)", "Kur(5)"]):
        runs[name] = cmp.compare_flow_and_sgd(
            jax.random.fold_in(modes_key, j), tasks[name], w0, batch=batch["other"], **common
        )
    first = {name: _first(c) for name, c in runs.items()}
    return Fig3Runs(tasks, w0, runs, first)


# -------------------------------------------------------------------------------------------------
# the final fields: IPR, peak, Fourier modes
# -------------------------------------------------------------------------------------------------
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
    """Measure the final fields of Fig. 3's first initialisation (``Fig3Runs.first``).

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
        "nlgp" and "kur" → the runs of ``Fig3Runs.runs`` (weights (I, C, N)).
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
        Eigenvalues at wave numbers k = 0, …, n - 1 (:func:`localization.data.spectral.circulant_eigenvalues`
        of the first rows).
    """
    if not isinstance(task, data.LengthscaleTask):
        raise TypeError(f"task must be a LengthscaleTask, got {type(task).__name__}")
    s0, s1 = (np.asarray(s) for s in task.covariances(n))
    lam0, lam1 = data.spectral.circulant_eigenvalues(s0[0]), data.spectral.circulant_eigenvalues(s1[0])
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
    if not (h > 0 and 0 < a0 <= 1 - h):
        raise ValueError(f"need h > 0 and 0 < a0 <= 1 - h, got a0 = {a0}, h = {h}")
    v0, vp, vm = np.asarray(theory.evaluate_amplifier(phi, np.array([a0, a0 + h, a0 - h])))
    return a0 * (vp - vm) / (2 * h) / v0, v0


# -------------------------------------------------------------------------------------------------
# paper §4.2: the peak count
# -------------------------------------------------------------------------------------------------
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


def peak_count(key: jax.Array, fig3: Fig3Runs) -> PeakCount:
    """Run the peak count: SGD and the exact-φ flow from Fig. 3's initialisations, final fields.

    Ising: Fig. 3's runs; NLGP(1.1) and NLGP(3) at ξ = (1, 2) (the paper's code's setting): SGD
    (batch :data:`PEAK_BATCH`, one stream shared by both gains) and the flow, lr 0.05, 2000 steps,
    from ``fig3.w0``.

    Parameters
    ----------
    key : jax.Array
        The NLGP SGD stream's PRNG key.
    fig3 : Fig3Runs
        The runs of :func:`fig3_runs`.

    Returns
    -------
    PeakCount
        The final fields and their peak agreement.
    """
    if not isinstance(fig3, Fig3Runs):
        raise TypeError(f"fig3 must be a Fig3Runs (fig3_sgd_vs_flow().data), got {type(fig3).__name__}")
    names = [f"NLGP({g:g})" for g in PEAK_GAINS]
    tasks = [data.family_task("NLGP", g, xi=PEAK_XI) for g in PEAK_GAINS]
    run = dict(lr=LR, steps=STEPS, checkpoints=[STEPS])
    sgd = train.train_sweep(key, tasks, fig3.w0, batch=PEAK_BATCH, balanced=True, **run)
    flow = cmp.flow_sweep(tasks, fig3.w0, **run)
    ising = fig3.runs["Ising"]
    final = {"Ising": (ising.sgd.weights[:, -1], ising.flow.weights[:, -1])}
    final.update({name: (sgd.weights[p, :, -1], flow.weights[p, :, -1]) for p, name in enumerate(names)})
    agree = {name: field_analysis.peak_agreement(s, f, tol=1) for name, (s, f) in final.items()}
    return PeakCount(final, agree)


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
