r"""How the hypercube flow's basins scale with the ring size n (the survey over n and its fit).

:func:`basin_table` runs :func:`localization.experiments.hypercube_basins.basin_survey` over ring sizes and
keys and pools the basin fractions as JSON-ready rows; :func:`basin_trend` fits a fraction against n by
binomial maximum likelihood (a logistic law, with standard errors and its deviance), and
:func:`basin_scaling` fits the threshold and the shrinking of the broad basins above it to a table's rows;
:func:`record_basin_tables` writes both families' tables as the book's record. Command:
``python -m localization.experiments.hypercube_basin_scaling Ising --n 10 --keys 0 1 2 3 4 --num 400``.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import NamedTuple

import jax
import numpy as np
from jax.typing import ArrayLike

from localization import validation as v
from localization.experiments.hypercube_basins import (
    PEAK_PREDICTORS,
    SNAPSHOT_TIMES,
    basin_survey,
    binomial_fraction,
    classify_fixed_points,
    fixed_point_families,
    score_predictors,
    symmetric_flow,
)
from localization.theory import hypercube_laws

__all__ = [
    "BasinTrend",
    "basin_trend",
    "BasinScaling",
    "basin_scaling",
    "basin_table",
    "record_basin_tables",
    "RECORD_NS",
    "RECORD_KEYS",
    "RECORD_NUM",
]


class BasinTrend(NamedTuple):
    r"""A logistic fit :math:`p(n)=\sigma(a+bn)` of basin fractions, by maximum likelihood (:func:`basin_trend`).

    Attributes
    ----------
    intercept, slope : a and b.
    intercept_se, slope_se : their standard errors (inverse Fisher information).
    half : :math:`n_{1/2}=-a/b`, where the fitted fraction is one half, and ``half_se`` its delta-method
        standard error.
    deviance, dof : the binomial deviance of the fit and its degrees of freedom (points - 2): a deviance
        far above ``dof`` says the logistic form does not describe the points.
    fitted : (P,) the fitted fractions at the given n.
    """

    intercept: float
    slope: float
    intercept_se: float
    slope_se: float
    half: float
    half_se: float
    deviance: float
    dof: int
    fitted: np.ndarray


def basin_trend(ns: ArrayLike, hits: ArrayLike, totals: ArrayLike, *, max_iter: int = 100) -> BasinTrend:
    r"""Fit :math:`\mathrm{logit}\,p=a+bn` to ``hits`` of ``totals`` starts at each ``n`` (binomial likelihood).

    Newton's method on the log-likelihood (iteratively reweighted least squares). Points at 0 or 1 are
    fine as long as the data are not separable (then the maximum is at infinity and this raises).

    Parameters
    ----------
    ns : ArrayLike
        (P,) ring sizes, at least 3 distinct.
    hits, totals : ArrayLike
        (P,) integers, 0 <= hits <= totals, totals >= 1.
    max_iter : int
        Newton iterations allowed, >= 1.

    Returns
    -------
    BasinTrend
    """
    ns = np.asarray(v.finite_real_array("ns", ns))
    k = np.asarray(v.finite_real_array("hits", hits))
    m = np.asarray(v.finite_real_array("totals", totals))
    if ns.ndim != 1 or k.shape != ns.shape or m.shape != ns.shape:
        raise ValueError(f"ns, hits and totals must share one shape (P,), got {ns.shape}, {k.shape}, {m.shape}")
    if len(np.unique(ns)) < 3:
        raise ValueError(f"ns must hold at least 3 distinct values (2 parameters and a check of the fit), got {ns}")
    if np.any(k != np.round(k)) or np.any(m != np.round(m)) or np.any(m < 1) or np.any(k < 0) or np.any(k > m):
        raise ValueError(f"hits and totals must be integers with 0 <= hits <= totals and totals >= 1, got {k}, {m}")
    max_iter = v.integer("max_iter", max_iter, 1)
    design = np.stack([np.ones_like(ns), ns], axis=1)
    beta = np.zeros(2)
    separable = "the fractions may be separable in n (all 0 below some n, all 1 above): no finite fit"
    for _ in range(max_iter):
        p = 0.5 * (1 + np.tanh(0.5 * (design @ beta)))  # the logistic function, without overflow
        info = (design.T * (m * p * (1 - p))) @ design
        try:
            step = np.linalg.solve(info, design.T @ (k - m * p))
        except np.linalg.LinAlgError:
            raise ValueError(f"basin_trend failed: {separable}") from None
        beta = beta + step
        if np.abs(step).max() < 1e-10 * (1 + np.abs(beta).max()):
            break
    else:
        raise ValueError(f"basin_trend did not converge in max_iter = {max_iter} steps: {separable}")
    p = 0.5 * (1 + np.tanh(0.5 * (design @ beta)))
    if np.any(m * p * (1 - p) < 1e-12) or not np.all(np.isfinite(beta)):
        raise ValueError(f"basin_trend diverged (coefficients {beta}): {separable}")
    cov = np.linalg.inv((design.T * (m * p * (1 - p))) @ design)
    a, b = beta
    grad = np.array([-1 / b, a / b**2])  # d(-a/b)/d(a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(k > 0, k * np.log(k / (m * p)), 0.0) + np.where(
            k < m, (m - k) * np.log((m - k) / (m * (1 - p))), 0.0
        )
    return BasinTrend(
        intercept=float(a),
        slope=float(b),
        intercept_se=float(math.sqrt(cov[0, 0])),
        slope_se=float(math.sqrt(cov[1, 1])),
        half=float(-a / b),
        half_se=float(math.sqrt(grad @ cov @ grad)),
        deviance=float(2 * terms.sum()),
        dof=len(ns) - 2,
        fitted=p,
    )


class BasinScaling(NamedTuple):
    r"""How the basins scale with n over a survey's rows (:func:`basin_scaling`).

    Attributes
    ----------
    threshold : BasinTrend
        The logistic law of the fraction of starts at :math:`w_{\mathrm{loc}}` over every n.
    threshold_quantile : float
        The chi-square quantile (at ``level``) of ``threshold.dof`` degrees of freedom: a deviance above
        it rejects the logistic law at that level.
    above : tuple of int
        The ring sizes above the threshold, :math:`n>n_{1/2}` of ``threshold``.
    broad : BasinTrend
        The logistic law of the fraction of starts at a broad fixed point over ``above`` only.
    broad_quantile : float
        The same quantile at ``broad.dof`` degrees of freedom.
    shrink, shrink_se : float
        :math:`e^{b}` of ``broad``: the factor by which the odds of ending broad (nearly the broad fraction,
        once small) shrink per site above the threshold, and its delta-method standard error
        :math:`e^{b}\,\mathrm{se}(b)`.
    """

    threshold: BasinTrend
    threshold_quantile: float
    above: tuple[int, ...]
    broad: BasinTrend
    broad_quantile: float
    shrink: float
    shrink_se: float


def basin_scaling(rows: list[dict], *, level: float = 0.999) -> BasinScaling:
    r"""Fit the threshold law and the shrinking of the broad basins to :func:`basin_table`'s rows.

    A start ends broad when it arrives at a fixed point that is not localized. The threshold is where
    the logistic law of the fraction at :math:`w_{\mathrm{loc}}` (all n) crosses one half; above it a second
    logistic law in n, fitted to the broad fractions there, gives the shrink factor per site.

    Parameters
    ----------
    rows : list of dict
        One per ring size, each with ``n``, ``arrived``, ``at_loc_hits`` and ``localized_hits`` (as
        :func:`basin_table` writes them); at least 3 distinct n, and at least 3 above the threshold.
    level : float
        The level of the chi-square quantiles, in (0, 1).

    Returns
    -------
    BasinScaling
    """
    import scipy.stats

    if not isinstance(rows, (list, tuple)) or not all(isinstance(r, dict) for r in rows):
        raise TypeError(f"rows must be a list of dicts (basin_table's rows), got {type(rows).__name__}")
    needed = ("n", "arrived", "at_loc_hits", "localized_hits")
    for r in rows:
        if any(k not in r for k in needed):
            raise ValueError(f"rows must each hold {needed}, got a row with keys {sorted(r)}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    ns = np.array([r["n"] for r in rows], dtype=float)
    arrived = np.array([r["arrived"] for r in rows], dtype=float)
    broad_hits = arrived - np.array([r["localized_hits"] for r in rows], dtype=float)
    threshold = basin_trend(ns, [r["at_loc_hits"] for r in rows], arrived)
    above = ns > threshold.half
    if above.sum() < 3:
        raise ValueError(
            f"rows must hold at least 3 ring sizes above the threshold n_1/2 = {threshold.half:.2f}, "
            f"got {ns[above].astype(int).tolist()}"
        )
    broad = basin_trend(ns[above], broad_hits[above], arrived[above])
    shrink = math.exp(broad.slope)
    return BasinScaling(
        threshold=threshold,
        threshold_quantile=float(scipy.stats.chi2.ppf(level, threshold.dof)),
        above=tuple(int(n) for n in ns[above]),
        broad=broad,
        broad_quantile=float(scipy.stats.chi2.ppf(level, broad.dof)),
        shrink=shrink,
        shrink_se=shrink * broad.slope_se,
    )


# -------------------------------------------------------------------------------------------------
# The survey over n: one row per ring size, pooled over keys
# -------------------------------------------------------------------------------------------------


def basin_table(
    family: str,
    ns: tuple[int, ...],
    keys: tuple[int, ...],
    num: int,
    *,
    law_key: int = 1000,
    **flow_options,
) -> list[dict]:
    r"""Survey the flow's basins on one task family at several ring sizes, pooling several keys.

    At each n the task is ``experiments.hypercube.task_laws(family, param, n)`` (Ising couplings (0.3, 0.7);
    for NLGP the law of :math:`\operatorname{sign}Z` at :math:`\xi=(1,3)` from ``fold_in(key(law_key), n)``) and
    each ``k`` of ``keys`` runs :func:`basin_survey` with ``num`` starts from ``fold_in(key(k), n)``; the
    fixed points of all keys are classified together. Costs about 10 s per 400 starts at n = 14 (twice the
    time per doubling of 2^n, on two cores).

    Parameters
    ----------
    family : str
        ``"Ising"`` or ``"NLGP"``.
    ns : tuple of int
        Ring sizes, each in [2, 16].
    keys : tuple of int
        Integer seeds of the starts (one survey each), at least one.
    num : int
        Starts per key and n, >= 1.
    law_key : int
        Seed of the NLGP laws (unused for Ising).
    **flow_options
        Passed to :func:`basin_survey` (``init_scale``, ``lr``, ``max_relative_step``, ``max_time``).

    Returns
    -------
    list of dict
        One row per n, JSON-ready: ``n``, ``starts``, ``arrived`` (starts that reached a fixed point, the
        denominator of the fractions), ``at_loc_hits`` and ``localized_hits`` (their counts), ``tied``,
        ``at_loc`` / ``at_loc_se`` (fraction of starts at :math:`w_{\mathrm{loc}}`), ``localized`` /
        ``localized_se`` (at any localized fixed point), ``classes``, ``families``,
        ``loss_loc`` (the loss at :math:`w_{\mathrm{loc}}`), ``loss_other`` (the lowest loss of another class
        reached, None if none), ``share_loc`` (:math:`w_{\mathrm{loc}}`'s localization share), ``predictors``
        (name -> [accuracy, standard error] over the localized runs; empty if none),
        ``settled`` (:data:`SNAPSHOT_TIMES` -> fraction of localized runs whose peak is final by then),
        ``seconds``.
    """
    from localization import field_analysis
    from localization.experiments import hypercube as hx

    if family not in hx.FAMILIES:
        raise ValueError(f"family must be one of {hx.FAMILIES}, got {family!r}")
    ns = tuple(hypercube_laws.check_dimension(v.integer("ns", n, 2)) for n in ns)
    keys = tuple(v.integer("keys", k, 0) for k in keys)
    if not ns or not keys:
        raise ValueError(f"ns and keys must be non-empty, got {ns} and {keys}")
    num = v.integer("num", num, 1)
    law_key = v.integer("law_key", law_key, 0)
    rows = []
    for n in ns:
        task = hx.task_laws(
            family,
            0.7 if family == "Ising" else 100.0,
            n,
            key=jax.random.fold_in(jax.random.PRNGKey(law_key), n),
        )
        flow = symmetric_flow(task)
        runs = [basin_survey(jax.random.fold_in(jax.random.PRNGKey(k), n), task, num, **flow_options) for k in keys]
        arrived = np.concatenate([s.arrival.arrived for s in runs])
        c = classify_fixed_points(
            np.concatenate([s.arrival.fixed_points for s in runs]), arrived, flow, reference=runs[0].w_loc
        )
        m = max(int(arrived.sum()), 1)
        on_loc = arrived & (c.labels >= 0) & c.localized[np.maximum(c.labels, 0)]
        at = c.labels == c.reference if c.reference >= 0 else np.zeros(len(arrived), bool)
        w_loc = runs[0].w_loc
        loss_loc = float(0.5 - 0.5 * w_loc @ np.asarray(flow.s_half) @ w_loc)
        others = np.delete(c.loss, c.reference) if c.reference >= 0 else c.loss
        row = {
            "n": n,
            "starts": len(arrived),
            "arrived": int(arrived.sum()),
            "at_loc_hits": int(at.sum()),
            "localized_hits": int(on_loc.sum()),
            "tied": int(sum(int(s.arrival.tied.sum()) for s in runs)),
            "at_loc": binomial_fraction(int(at.sum()), m)[0],
            "at_loc_se": binomial_fraction(int(at.sum()), m)[1],
            "localized": binomial_fraction(int(on_loc.sum()), m)[0],
            "localized_se": binomial_fraction(int(on_loc.sum()), m)[1],
            "classes": len(c.counts),
            "families": len(set(fixed_point_families(c.representatives).tolist())) if len(c.counts) else 0,
            "loss_loc": loss_loc,
            "loss_other": float(others.min()) if len(others) else None,
            "share_loc": float(field_analysis.localization_share(w_loc)),
            "predictors": {},
            "settled": {},
            "seconds": float(sum(s.seconds for s in runs)),
        }
        if on_loc.any():
            predictions = {
                name: tuple(np.concatenate([s.predictions[name][j] for s in runs]) for j in range(2))
                for name in PEAK_PREDICTORS
            }
            scores = score_predictors(predictions, c.peaks, c.peak_signs, on_loc, n)
            row["predictors"] = {k: [s.accuracy, s.standard_error] for k, s in scores.items()}
            snaps = np.concatenate([s.arrival.snapshot_peaks for s in runs])
            settled = (snaps == c.peaks[:, None])[on_loc].mean(axis=0)
            row["settled"] = {str(t): float(f) for t, f in zip(SNAPSHOT_TIMES, settled, strict=True)}
        rows.append(row)
    return rows


#: The recorded survey (``book/data/hypercube_basins.json``): ring sizes, keys of the starts, starts per key.
RECORD_NS, RECORD_KEYS, RECORD_NUM = (6, 8, 10, 12, 14, 16), (0, 1, 2, 3, 4), 400


def record_basin_tables(
    path: str | os.PathLike,
    ns: tuple[int, ...] = RECORD_NS,
    keys: tuple[int, ...] = RECORD_KEYS,
    num: int = RECORD_NUM,
    *,
    law_key: int = 1000,
    **flow_options,
) -> dict:
    r"""Run :func:`basin_table` on both task families and write them, with the settings, as one record.

    Written by :func:`localization.records.write` (with the commit and JAX's version). The default
    settings are the book's record: about 8 CPU-minutes, most of it at n = 16.

    Parameters
    ----------
    path : str or os.PathLike
        The JSON file; its directory must exist (checked before the runs).
    ns, keys, num, law_key, **flow_options
        As in :func:`basin_table`.

    Returns
    -------
    dict
        The record as written: ``settings`` (``ns``, ``keys``, ``num``, ``law_key``, ``flow_options``) and
        ``tables`` (family -> :func:`basin_table`'s rows), plus ``commit`` and ``jax_version``.
    """
    import json

    from localization import records
    from localization.experiments import hypercube as hx

    if not isinstance(path, (str, os.PathLike)) or not Path(path).parent.is_dir():
        raise ValueError(f"path must be a file in an existing directory, got {path!r}")  # before the runs
    ns, keys = tuple(ns), tuple(keys)
    settings = {"ns": list(ns), "keys": list(keys), "num": num, "law_key": law_key, "flow_options": flow_options}
    tables = {family: basin_table(family, ns, keys, num, law_key=law_key, **flow_options) for family in hx.FAMILIES}
    written = records.write(path, {"settings": settings, "tables": tables})
    return json.loads(written.read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m localization.experiments.hypercube_basin_scaling FAMILY --n 6 8 --keys 0 1``.

    Prints :func:`basin_table`'s rows as JSON (or writes them to ``--out``); with ``--record PATH`` and no
    family, writes both families as one record (:func:`record_basin_tables`).
    """
    import argparse
    import json

    from localization import enable_float64

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("family", nargs="?", choices=("Ising", "NLGP"), help="omit with --record")
    parser.add_argument("--n", type=int, nargs="+", default=list(RECORD_NS), help="ring sizes, 2-16")
    parser.add_argument("--keys", type=int, nargs="+", default=list(RECORD_KEYS), help="seeds of the starts")
    parser.add_argument("--num", type=int, default=RECORD_NUM, help="starts per key and n")
    parser.add_argument("--law-key", type=int, default=1000, help="seed of the NLGP laws")
    parser.add_argument("--max-relative-step", type=float, default=None)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--out", default=None, help="JSON file (default: standard output)")
    parser.add_argument("--record", default=None, help="write both families to this record (no family)")
    args = parser.parse_args(argv)
    if (args.family is None) == (args.record is None):
        parser.error("give either a family or --record PATH, not both")
    enable_float64()
    survey = (tuple(args.n), tuple(args.keys), args.num)
    options = {"law_key": args.law_key, "lr": args.lr, "max_relative_step": args.max_relative_step}
    if args.record:
        record_basin_tables(args.record, *survey, **options)
        return 0
    rows = basin_table(args.family, *survey, **options)
    text = json.dumps({"family": args.family, "keys": args.keys, "num": args.num, "rows": rows}, indent=1)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
