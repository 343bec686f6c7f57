r"""Claim 3.2 in simulation: localization switches on where the excess kurtosis changes sign.

The sweeps of the chapter *Effective dynamics vs simulation* (``book/effective_dynamics.md``): SGD
and the exact-φ flow of paper Eq. (5) along NLGP(g) (:data:`CLAIM_GAINS`) and Kur(k)
(:data:`CLAIM_KS`) at the short length-scales ξ = (0.3, 0.7), from the first :data:`CLAIM_INITS`
of Fig. 3's initialisations:

* :func:`kurtosis_sweep` — the final IPRs and localization shares, and the parameters where the mean
  IPR takes off (:class:`KurtosisSweep`);
* :func:`first_most_localized` — the first parameter at which most fields are localized;
* :func:`excess_kurtosis_at` — the exact excess kurtosis at a threshold found.

Randomness comes in as an explicit key. Time is steps × lr throughout.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import numpy as np

from localization import data, field_analysis, metrics, train
from localization.experiments import effective_dynamics as cmp
from localization.experiments.flow_breakdown import XI_SHORT

__all__ = [
    "CLAIM_GAINS",
    "CLAIM_KS",
    "CLAIM_RUN",
    "CLAIM_BATCH",
    "CLAIM_INITS",
    "KurtosisSweep",
    "first_most_localized",
    "kurtosis_sweep",
    "excess_kurtosis_at",
]

#: Claim 3.2's sweeps (ξ = :data:`~localization.experiments.flow_breakdown.XI_SHORT`): NLGP gains,
#: Kur exponents, run settings, SGD batch, initialisations (the first of Fig. 3's).
CLAIM_GAINS = np.logspace(-1, 1, 9)
CLAIM_KS = np.array([4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 8.0, 10.0, 20.0])
CLAIM_RUN = dict(lr=0.1, steps=3000, checkpoints=[3000])
CLAIM_BATCH, CLAIM_INITS = 500, 4


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


def kurtosis_sweep(key: jax.Array, w0: Any) -> KurtosisSweep:
    """Run Claim 3.2's sweeps: SGD and the exact-φ flow on NLGP(g) and Kur(k), ξ = (0.3, 0.7).

    SGD (batch :data:`CLAIM_BATCH`, one stream per family shared by its parameters) and the flow (φ
    tabulated on 1025 points: error < 2e-5, far below the SGD noise), lr 0.1, 3000 steps
    (:data:`CLAIM_RUN`).

    Parameters
    ----------
    key : jax.Array
        The SGD streams' PRNG key: family ``j`` (0: NLGP, 1: Kur) draws from
        ``jax.random.fold_in(key, j)``.
    w0 : array_like, shape (I, n)
        The initial weights (the chapter: the first :data:`CLAIM_INITS` of Fig. 3's).

    Returns
    -------
    KurtosisSweep
        The final IPRs and the thresholds.
    """
    sweep = {}
    for j, (fam, params) in enumerate((("NLGP", CLAIM_GAINS), ("Kur", CLAIM_KS))):
        tasks = [data.family_task(fam, float(p), xi=XI_SHORT) for p in params]
        s = train.train_sweep(jax.random.fold_in(key, j), tasks, w0, batch=CLAIM_BATCH, balanced=True, **CLAIM_RUN)
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
