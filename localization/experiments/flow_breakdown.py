r"""Where the effective flow stops following SGD: paper Fig. 8 (App. D.1), as assumption A3 fails.

The runs and measurements of the chapter *Effective dynamics vs simulation*
(``book/effective_dynamics.md``) on NLGP(g = 100), which localizes, and NLGP(g = 0.01), which does
not, at the short length-scales ξ = (0.3, 0.7):

* :func:`breakdown` — SGD, an independent SGD replica (NLGP(0.01)) and the exact-φ flow of paper
  Eq. (5) from the same initial weights, with the IPR, the Lindeberg ratio (A3), the shape distance
  (Eq. (eff-distance)) along the runs and the SGD-vs-SGD noise floor (:class:`Breakdown`);
* :func:`breakdown_measures`, :func:`breakdown_summary` — when the fields localize, where their
  distance peaks, where the final peaks sit.

Randomness comes in as explicit keys; the settings are :data:`FIG8` (one entry per scale).
Time is steps × lr throughout.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import jax
import numpy as np

from localization import data, field_analysis, initialisation, metrics, train
from localization.experiments import effective_dynamics as cmp
from localization.theory import assumptions
from localization.trajectory import Trajectory

__all__ = [
    "XI_SHORT",
    "FIG8",
    "Breakdown",
    "breakdown",
    "BreakdownMeasures",
    "breakdown_measures",
    "breakdown_summary",
]

#: Length-scales of Fig. 8 (and of the chapter's sweeps): both short.
XI_SHORT = (0.3, 0.7)
#: Fig. 8's settings at each scale (the same horizon t = 60): ring size, batch, learning rate, steps,
#: checkpoints, initialisations on NLGP(100).
FIG8 = {
    "chapter": dict(n=40, batch=8000, lr=0.05, steps=1200, checkpoints=121, inits=4),
    "paper": dict(n=100, batch=50_000, lr=0.01, steps=6000, checkpoints=121, inits=4),
}


class Breakdown(NamedTuple):
    """The runs and measurements of paper Fig. 8 (:func:`breakdown`).

    Attributes
    ----------
    tasks : list of LengthscaleTask
        NLGP(100) and NLGP(0.01) at ξ = :data:`XI_SHORT`.
    settings : dict
        The settings run (a :data:`FIG8` entry).
    w0 : jax.Array, shape (I, n)
        The initial weights (Xavier-normal, scale 1e-3).
    sgd, flow : localization.trajectory.Trajectory
        SGD and the exact-φ flow on both tasks, weights (2, I, C, n).
    replica : localization.trajectory.Trajectory
        An independent SGD run on NLGP(0.01), weights (I, C, n).
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


def _check_settings(settings: Any) -> dict[str, Any]:
    names = {"n", "batch", "lr", "steps", "checkpoints", "inits"}
    if not isinstance(settings, Mapping) or set(settings) != names:
        raise ValueError(f"settings must have exactly the keys {sorted(names)} (a FIG8 entry), got {settings!r}")
    return dict(settings)


def breakdown(key: jax.Array, settings: Mapping[str, Any], *, w0_key: jax.Array, replica_key: jax.Array) -> Breakdown:
    """Run paper Fig. 8: SGD and the exact-φ flow on NLGP(g = 100) and NLGP(g = 0.01), ξ = (0.3, 0.7).

    Parameters
    ----------
    key : jax.Array
        The SGD stream's PRNG key (shared by both tasks).
    settings : mapping
        ``n``, ``batch``, ``lr``, ``steps``, ``checkpoints``, ``inits`` (:data:`FIG8` of a scale;
        chapter: N = 40, batch 8000, lr 0.05, 1200 steps; paper: N = 100, batch 50 000, lr 0.01,
        6000 steps; the same horizon t = 60).
    w0_key : jax.Array
        The initial weights' key (``inits`` Xavier-normal fields, scale 1e-3).
    replica_key : jax.Array
        The independent NLGP(0.01) SGD run's key.

    Returns
    -------
    Breakdown
        The runs and their measurements.
    """
    settings = _check_settings(settings)
    n, batch = settings["n"], settings["batch"]
    run = {k: settings[k] for k in ("lr", "steps", "checkpoints")}
    tasks = [data.family_task("NLGP", g, xi=XI_SHORT) for g in (100.0, 0.01)]
    w0 = initialisation.init_weights(w0_key, n, init_scale=1e-3, num=settings["inits"])
    sgd = train.train_sweep(key, tasks, w0, batch=batch, balanced=True, **run)
    replica = train.train_online(replica_key, tasks[1], w0, batch=batch, balanced=True, **run)
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
        tasks, settings, w0, sgd, flow, replica, times, ipr, lindeberg, distance, distance_replica,
        noise_floor, level, t_break,
    )  # fmt: skip


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


def _check_breakdown(b: Any) -> None:
    if not isinstance(b, Breakdown):
        raise TypeError(f"b must be a Breakdown (fig8_breakdown().data), got {type(b).__name__}")


def breakdown_measures(b: Breakdown) -> BreakdownMeasures:
    """Measure the Fig. 8 runs: localization times, the distance's peak, the final peaks.

    Parameters
    ----------
    b : Breakdown
        The runs of :func:`breakdown`.

    Returns
    -------
    BreakdownMeasures
    """
    _check_breakdown(b)
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
    """Return the Fig. 8 measurements, one line per NLGP(100) run and one for NLGP(0.01).

    Parameters
    ----------
    b : Breakdown
        The runs of :func:`breakdown`.
    m : BreakdownMeasures
        Their :func:`breakdown_measures`.

    Returns
    -------
    str
    """
    _check_breakdown(b)
    if not isinstance(m, BreakdownMeasures):
        raise TypeError(f"m must be a BreakdownMeasures (breakdown_measures(b)), got {type(m).__name__}")
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
