r"""What the near-zero records say: share, width and IPR of SGD fields, pooled over seeds (simulation chapter).

The measures of :mod:`localization.field_analysis.localized` (the book's definition of a localized
field and the bump's width) and the IPR along runs, and the summaries of the records of
:mod:`localization.experiments.near_zero` that the chapter and its figure read.

* :func:`field_paths` — share, width and IPR of a run's fields at every checkpoint;
* :func:`localization_time` — the first checkpoint from which a field stays localized;
* :func:`near_zero_summary` — one :class:`NearZeroPoint` per value of the near-zero record;
* :func:`batch_scan_summary` — one :class:`BatchPoint` per task and batch of the batch scan;
* :func:`near_zero_evidence` — the three records, those summaries and the effective flow's fixed points
  (:func:`localization.experiments.bump_flow.flow_curve`) as one :class:`NearZeroEvidence` (what the
  chapter's figure draws); :func:`end_spread` — median and 10–90 % range at the last checkpoint;
* :func:`near_zero_findings` — what the chapter states of them (:class:`NearZeroFindings`), with
  :func:`localized_median`.

Deterministic (no randomness: the runs are recorded, the flow is computed in float64).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
from jax.typing import ArrayLike

from localization import metrics
from localization import validation as v
from localization.experiments import bump_flow
from localization.field_analysis import LOCALIZED_SHARE, bump_width, localization_share, localization_window

__all__ = [
    "FieldPaths",
    "field_paths",
    "localization_time",
    "NearZeroPoint",
    "near_zero_summary",
    "BatchPoint",
    "batch_scan_summary",
    "NearZeroEvidence",
    "near_zero_evidence",
    "EndSpread",
    "end_spread",
    "NearZeroFindings",
    "localized_median",
    "near_zero_findings",
]


# -------------------------------------------------------------------------------------------------
# SGD fields: share, width and IPR along the runs
# -------------------------------------------------------------------------------------------------
class FieldPaths(NamedTuple):
    """Share, width and IPR of SGD fields at every checkpoint (float64 / int NumPy arrays).

    Attributes
    ----------
    times : (C,) checkpoint times. share, ipr : (..., C). width : (..., C) integers.
    final : (..., N) the last checkpoint's fields, scaled to unit norm.
    """

    times: np.ndarray
    share: np.ndarray
    width: np.ndarray
    ipr: np.ndarray
    final: np.ndarray


def field_paths(path: ArrayLike, times: ArrayLike, n: int) -> FieldPaths:
    """Return :class:`FieldPaths` of weights along runs.

    Parameters
    ----------
    path : ArrayLike
        ``(..., C, N)`` weights at C checkpoints (``IPRSweep.path``), N = n, non-zero.
    times : ArrayLike
        ``(C,)`` checkpoint times.
    n : int
        Ring size.

    Returns
    -------
    FieldPaths
    """
    n = v.integer("n", n, 4)
    w = np.asarray(v.float_array("path", path, ndim_min=2, last_dim=n), dtype=np.float64)
    t = np.asarray(v.float_array("times", times), dtype=np.float64)
    if t.ndim != 1 or t.shape[0] != w.shape[-2]:
        raise ValueError(f"times must have one entry per checkpoint ({w.shape[-2]}), got shape {t.shape}")
    final = w[..., -1, :]
    return FieldPaths(
        times=t,
        share=localization_share(w, n),
        width=bump_width(w, n),
        ipr=np.asarray(metrics.ipr(w), dtype=np.float64),
        final=final / np.linalg.norm(final, axis=-1, keepdims=True),
    )


def localization_time(share: ArrayLike, times: ArrayLike) -> np.ndarray:
    """Return the first checkpoint time from which a field stays localized to the end (NaN: not localized at the end).

    Parameters
    ----------
    share : ArrayLike
        ``(..., C)`` localization shares at the checkpoints.
    times : ArrayLike
        ``(C,)`` checkpoint times, increasing.

    Returns
    -------
    numpy.ndarray
        ``(...)`` times (NaN where the last share is at most the threshold).
    """
    s = np.asarray(v.float_array("share", share), dtype=np.float64)
    t = np.asarray(v.float_array("times", times), dtype=np.float64)
    if t.ndim != 1 or t.shape[0] != s.shape[-1]:
        raise ValueError(f"times must have one entry per checkpoint ({s.shape[-1]}), got shape {t.shape}")
    if np.any(np.diff(t) <= 0):
        raise ValueError("times must be increasing")
    loc = s > LOCALIZED_SHARE
    # index of the first checkpoint of the final run of localized checkpoints
    tail = np.flip(np.cumprod(np.flip(loc, -1), axis=-1), -1).astype(bool)
    first = np.argmax(tail, axis=-1)
    return np.where(loc[..., -1], t[first], np.nan)


# -------------------------------------------------------------------------------------------------
# what a record says
# -------------------------------------------------------------------------------------------------
class NearZeroPoint(NamedTuple):
    """One value of a near-zero record, pooled over its seeds and initialisations (:func:`near_zero_summary`).

    Attributes
    ----------
    family : str; param : float; excess_kurtosis : float.
    times : (C,) checkpoint times.
    share, width, ipr : (S, I, C) over seeds S, initialisations I and checkpoints.
    localized : (S, I) localized at the last checkpoint. fraction : their share of the S × I fields.
    t_loc : (S, I) :func:`localization_time` (NaN where not localized at the end).
    """

    family: str
    param: float
    excess_kurtosis: float
    times: np.ndarray
    share: np.ndarray
    width: np.ndarray
    ipr: np.ndarray
    localized: np.ndarray
    fraction: float
    t_loc: np.ndarray


def near_zero_summary(record: Mapping[str, Any], group: str) -> list[NearZeroPoint]:
    """Return one :class:`NearZeroPoint` per value of a group of a :func:`near_zero_record`.

    Parameters
    ----------
    record : Mapping
        The record (JSON dict) with ``seeds``.
    group : str
        ``"NLGP"``, ``"Kur"``, ``"NLGP_wide"`` or ``"Kur_wide"``.

    Returns
    -------
    list of NearZeroPoint
        In the order of the group's parameters.
    """
    seeds = record.get("seeds") if isinstance(record, Mapping) else None
    if not seeds:
        raise ValueError("record must be a near_zero_record with at least one seed")
    if group not in seeds[0]:
        raise ValueError(f"group must be one of the record's groups, got {group!r}")
    times = np.asarray(seeds[0]["times"], dtype=np.float64)
    g0 = seeds[0][group]
    family = group.removesuffix("_wide")
    out = []
    for p, (param, exk) in enumerate(zip(g0["params"], g0["excess_kurtosis"], strict=True)):
        share = np.array([s[group]["share"][p] for s in seeds], dtype=np.float64)
        width = np.array([s[group]["width"][p] for s in seeds], dtype=np.int64)
        ipr = np.array([s[group]["ipr"][p] for s in seeds], dtype=np.float64)
        localized = share[..., -1] > LOCALIZED_SHARE
        out.append(
            NearZeroPoint(
                family=family,
                param=float(param),
                excess_kurtosis=float(exk),
                times=times,
                share=share,
                width=width,
                ipr=ipr,
                localized=localized,
                fraction=float(localized.mean()),
                t_loc=localization_time(share, times),
            )
        )
    return out


class BatchPoint(NamedTuple):
    """One task at one batch of a batch-scan record, pooled over its seeds (:func:`batch_scan_summary`).

    Attributes
    ----------
    family : str; param : float; batch : int.
    times : (C,) checkpoint times.
    share, width, ipr : (S, I, C) over seeds S, initialisations I and checkpoints.
    """

    family: str
    param: float
    batch: int
    times: np.ndarray
    share: np.ndarray
    width: np.ndarray
    ipr: np.ndarray


def batch_scan_summary(record: Mapping[str, Any]) -> list[BatchPoint]:
    """Return one :class:`BatchPoint` per (task, batch) of a ``near_zero.batch_scan_record``, in its order.

    Parameters
    ----------
    record : Mapping
        The record (JSON dict) with ``seeds``, each holding the same ``runs``.

    Returns
    -------
    list of BatchPoint
    """
    seeds = record.get("seeds") if isinstance(record, Mapping) else None
    if not seeds or "runs" not in seeds[0]:
        raise ValueError("record must be a batch_scan_record with at least one seed")
    times = np.asarray(seeds[0]["times"], dtype=np.float64)
    out = []
    for r, run in enumerate(seeds[0]["runs"]):
        if any((s["runs"][r]["family"], s["runs"][r]["batch"]) != (run["family"], run["batch"]) for s in seeds):
            raise ValueError("record's seeds must hold the same runs in the same order")
        out.append(
            BatchPoint(
                family=run["family"],
                param=float(run["param"]),
                batch=int(run["batch"]),
                times=times,
                share=np.array([s["runs"][r]["share"][0] for s in seeds], dtype=np.float64),
                width=np.array([s["runs"][r]["width"][0] for s in seeds], dtype=np.int64),
                ipr=np.array([s["runs"][r]["ipr"][0] for s in seeds], dtype=np.float64),
            )
        )
    return out


# -------------------------------------------------------------------------------------------------
# the records together with the flow (what the chapter's figure draws)
# -------------------------------------------------------------------------------------------------
class NearZeroEvidence(NamedTuple):
    """The near-zero records, what they say and the effective flow's fixed points (:func:`near_zero_evidence`).

    Attributes
    ----------
    record, positive_record, batch_record : the three JSON records.
    points : group (``"NLGP"``, ``"Kur"``, ``"NLGP_wide"``, ``"Kur_wide"`` of ``record``, and
        ``"Kur_positive"``, the Kur values of ``positive_record``) → list of :class:`NearZeroPoint`.
    flow : (family, "paper" or "wide") → ``bump_flow.FlowCurve``.
    batch : list of :class:`BatchPoint`.
    """

    record: dict
    positive_record: dict
    batch_record: dict
    points: dict
    flow: dict
    batch: list


def near_zero_evidence(
    record: Mapping[str, Any],
    positive_record: Mapping[str, Any],
    batch_record: Mapping[str, Any],
    *,
    flow_grid: Mapping[str, Any] = bump_flow.FLOW_GRID,
    flow_grid_wide: Mapping[str, Any] = bump_flow.FLOW_GRID_WIDE,
) -> NearZeroEvidence:
    """Summarise the three near-zero records and compute the effective flow's fixed points beside them.

    Deterministic; the flow is computed in float64 (call ``localization.enable_float64()`` first).

    Parameters
    ----------
    record : Mapping
        The near-zero record (``python -m localization.experiments.runs near_zero PATH``); its
        ``settings`` give the paper's ``xi`` and the ``wide_xi``.
    positive_record : Mapping
        The record of Kur between 5.4 and 5.8 (``... near_zero_positive PATH``).
    batch_record : Mapping
        The batch scan (``... near_zero_batch PATH``).
    flow_grid, flow_grid_wide : Mapping
        Family (``"NLGP"``, ``"Kur"``) → the parameters of the flow's fixed points at ``xi`` and at
        ``wide_xi`` (default ``bump_flow.FLOW_GRID`` and ``bump_flow.FLOW_GRID_WIDE``).

    Returns
    -------
    NearZeroEvidence
    """
    for name, grid in (("flow_grid", flow_grid), ("flow_grid_wide", flow_grid_wide)):
        if not isinstance(grid, Mapping) or not {"NLGP", "Kur"} <= set(grid):
            raise ValueError(f"{name} must map 'NLGP' and 'Kur' to parameters, got {grid!r}")
    seeds = record.get("seeds") if isinstance(record, Mapping) else None
    if not seeds:
        raise ValueError("record must be a near_zero_record with at least one seed")
    points = {g: near_zero_summary(record, g) for g in ("NLGP", "Kur", "NLGP_wide", "Kur_wide") if g in seeds[0]}
    points["Kur_positive"] = near_zero_summary(positive_record, "Kur")
    xi, wide = tuple(record["settings"]["xi"]), tuple(record["settings"]["wide_xi"])
    flow = {}
    for family in ("NLGP", "Kur"):
        flow[(family, "paper")] = bump_flow.flow_curve(family, flow_grid[family], xi=xi)
        flow[(family, "wide")] = bump_flow.flow_curve(family, flow_grid_wide[family], xi=wide)
    return NearZeroEvidence(record, positive_record, batch_record, points, flow, batch_scan_summary(batch_record))


class EndSpread(NamedTuple):
    """Share and width of a list of points at the last checkpoint, over all their fields (:func:`end_spread`).

    Attributes
    ----------
    excess_kurtosis : (P,).
    share, width : (P,) medians; share_err, width_err : (2, P) the distances below and above the
        median to the 10th and 90th percentiles (``yerr`` of ``errorbar``).
    """

    excess_kurtosis: np.ndarray
    share: np.ndarray
    share_err: np.ndarray
    width: np.ndarray
    width_err: np.ndarray


def _spread(values: list) -> tuple[np.ndarray, np.ndarray]:
    """Median and the (below, above) distances to the 10th and 90th percentiles of each array of a list."""
    med = np.array([np.median(x) for x in values])
    lo, hi = np.array([np.percentile(x, [10, 90]) for x in values]).T
    return med, np.stack([med - lo, hi - med])


def end_spread(points: list[NearZeroPoint]) -> EndSpread:
    """Return the median and 10–90 % range of the share and width at the last checkpoint of each point.

    Parameters
    ----------
    points : list of NearZeroPoint
        Non-empty; each point's ``share`` and ``width`` are (S, I, C).

    Returns
    -------
    EndSpread
    """
    if not points or not all(isinstance(p, NearZeroPoint) for p in points):
        raise ValueError("points must be a non-empty list of NearZeroPoint")
    share, share_err = _spread([p.share[..., -1].ravel() for p in points])
    width, width_err = _spread([p.width[..., -1].ravel() for p in points])
    return EndSpread(np.array([p.excess_kurtosis for p in points]), share, share_err, width, width_err)


# -------------------------------------------------------------------------------------------------
# what the chapter states of them
# -------------------------------------------------------------------------------------------------
class NearZeroFindings(NamedTuple):
    """What the chapter reads from a :class:`NearZeroEvidence` (:func:`near_zero_findings`).

    Attributes
    ----------
    points : (family, parameter rounded to 3 decimals) → ``NearZeroPoint`` at the paper's ξ
        (``"Kur_positive"`` values filed under ``"Kur"``).
    fraction, excess_kurtosis : the same keys → the share of fields localized at the end, and the
        exact excess kurtosis.
    nlgp_g, kur_k, kur_pos_k : sorted parameters (``kur_k`` includes the positive record's).
    most_g, most_k : the parameters with more than half of their fields localized.
    tloc_med, tloc_share : NLGP(0.278) and Kur(6.1): median time localized for good (never → ∞),
        and the share of the fields localized at the end that were so by t = 500.
    stay, dw, ipr_move : (F,) over the fields of those two values localized at t = 500: localized
        at every later checkpoint; ``abs(width(t_end) - width(500))``; ``abs(ΔIPR) / IPR(t_end)``.
    end_lost, end_new, end_dw : near the end of localization (NLGP g ≤ 0.19, Kur 5.8–5.9): fields
        that leave / enter the localized set between t = 500 and t_end, largest width change of a
        field localized at both.
    width, ipr : (family, parameter) → median width / IPR of the fields localized at the end.
    flow_points : dict of (B,) arrays over every fixed point of every flow curve: ``is_bump``
        (share above a quarter of the ring), ``growth`` (the constant's largest eigenvalue),
        ``other`` (largest eigenvalue but the shift's), ``shift``, ``width``.
    born, first_localized : family → (parameter, width) of the first grid point with a bump, and
        the first parameter whose fixed point is localized.
    flow_sgd_dw : ``abs(flow width - SGD median width)`` where both are localized (SGD: more than half).
    batch_width, batch_loc, batch_loc_kur : batch scan, over the last half of the runs: (family,
        batch) → median width; batch → share localized (both families); batch → Kur's share.
    wide_width, flow_width : twice the length-scales: family → SGD median width; (family, "paper"
        or "wide") → the flow's width at NLGP(0.2783) / Kur(6.1).
    glue : the values the chapter glues (name without the ``sim-nz-`` prefix → value).
    """

    points: dict
    fraction: dict
    excess_kurtosis: dict
    nlgp_g: list
    kur_k: list
    kur_pos_k: list
    most_g: list
    most_k: list
    tloc_med: float
    tloc_share: float
    stay: np.ndarray
    dw: np.ndarray
    ipr_move: np.ndarray
    end_lost: int
    end_new: int
    end_dw: int
    width: dict
    ipr: dict
    flow_points: dict
    born: dict
    first_localized: dict
    flow_sgd_dw: list
    batch_width: dict
    batch_loc: dict
    batch_loc_kur: dict
    wide_width: dict
    flow_width: dict
    glue: dict


def localized_median(point, what: str) -> float:
    """Median of ``point.<what>`` at the last checkpoint over the fields localized there.

    Parameters
    ----------
    point : NearZeroPoint
        Its ``share``, ``width`` and ``ipr`` are (S, I, C); ``localized`` is (S, I).
    what : {"width", "ipr", "share"}
        The measure.

    Returns
    -------
    float
        NaN if no field is localized.
    """
    if what not in ("width", "ipr", "share"):
        raise ValueError(f"what must be 'width', 'ipr' or 'share', got {what!r}")
    values = getattr(point, what)[..., -1][point.localized]
    return float(np.median(values)) if values.size else float("nan")


def near_zero_findings(evidence: NearZeroEvidence, t_mid: float = 500.0) -> NearZeroFindings:
    """Summarise the near-zero records and flow as the chapter states them (its check asserts).

    Parameters
    ----------
    evidence : NearZeroEvidence
        The records and the flow (:func:`near_zero_evidence`; the data of the chapter's figure
        ``figures.near_zero.near_zero_bumps``).
    t_mid : float
        The checkpoint time against which stationarity is read (default 500, the paper's t_end / 2).

    Returns
    -------
    NearZeroFindings
    """
    if not isinstance(evidence, NearZeroEvidence):
        raise TypeError(f"evidence must be a NearZeroEvidence, got {type(evidence).__name__}")
    loc = LOCALIZED_SHARE
    pts = {(p.family, round(p.param, 3)): p for g in ("NLGP", "Kur", "Kur_positive") for p in evidence.points[g]}
    frac = {fp: p.fraction for fp, p in pts.items()}
    exk = {fp: p.excess_kurtosis for fp, p in pts.items()}
    nlgp_g = sorted(g for f, g in pts if f == "NLGP")
    kur_k = sorted(k for f, k in pts if f == "Kur")
    kur_pos_k = sorted(round(p.param, 3) for p in evidence.points["Kur_positive"])
    record_ks = list(evidence.record["settings"]["ks"])
    most_g = [g for g in nlgp_g if frac[("NLGP", g)] > 0.5]
    most_k = [k for k in kur_k if frac[("Kur", k)] > 0.5]
    if ("NLGP", 0.278) not in pts or ("Kur", 6.1) not in pts:
        raise ValueError("the record must hold NLGP(0.278) and Kur(6.1)")
    # stationary: NLGP(0.278), Kur(6.1)
    pair = [pts[("NLGP", 0.278)], pts[("Kur", 6.1)]]
    hits = np.flatnonzero(pair[0].times == t_mid)
    if hits.size == 0:
        raise ValueError(f"t_mid must be a checkpoint time of the record, got {t_mid}")
    at = int(hits[0])
    t_loc = np.concatenate([p.t_loc.ravel() for p in pair])
    tloc_med = float(np.median(np.where(np.isnan(t_loc), np.inf, t_loc)))
    tloc_share = float(np.mean(t_loc[~np.isnan(t_loc)] <= t_mid))
    stay, dw, ipr_move = [], [], []
    for p in pair:
        was = p.share[..., at] > loc
        stay.append(np.all(p.share[..., at:] > loc, -1)[was])
        dw.append(np.abs(p.width[..., -1] - p.width[..., at])[was])
        ipr_move.append((np.abs(p.ipr[..., -1] - p.ipr[..., at]) / p.ipr[..., -1])[was])
    # near the end of localization fields enter and leave the localized set
    end_pts = [pts[("NLGP", g)] for g in nlgp_g if g <= 0.19]
    end_pts += [pts[("Kur", k)] for k in record_ks if 5.8 <= k <= 5.9]
    end_lost = end_new = end_dw = 0
    for p in end_pts:
        was, now = p.share[..., at] > loc, p.share[..., -1] > loc
        end_lost += int((was & ~now).sum())
        end_new += int((~was & now).sum())
        both = was & now
        if both.any():
            end_dw = max(end_dw, int(np.abs(p.width[..., -1] - p.width[..., at])[both].max()))
    width = {fp: localized_median(p, "width") for fp, p in pts.items()}
    ipr = {fp: localized_median(p, "ipr") for fp, p in pts.items()}
    # the flow's fixed points, every curve
    n = int(evidence.record["settings"]["n"])
    quarter = localization_window(n) / n
    every = [b for curve in evidence.flow.values() for b in curve.bumps]
    flow_points = {
        "is_bump": np.array([b.share > quarter + 1e-6 for b in every]),
        "growth": np.array([b.constant_growth for b in every]),
        "other": np.array([b.largest_other for b in every]),
        "shift": np.array([b.translation for b in every]),
        "width": np.array([b.width for b in every]),
    }
    born, first_loc, flow_dw = {}, {}, []
    for family in ("NLGP", "Kur"):
        curve = evidence.flow[(family, "paper")]
        i = int(np.argmax(curve.constant_growth > 0))
        born[family] = (float(curve.params[i]), curve.bumps[i].width)
        first_loc[family] = float(next(p for p, b in zip(curve.params, curve.bumps, strict=True) if b.localized))
        for p, b in zip(curve.params, curve.bumps, strict=True):
            pt = pts.get((family, round(float(p), 3)))
            if pt is not None and b.localized and pt.fraction > 0.5:
                flow_dw.append(abs(b.width - localized_median(pt, "width")))
    # the batch scan: over the last half of the runs, all fields
    bs = {(p.family, p.batch): p for p in evidence.batch}
    batches = list(evidence.batch_record["settings"]["batches"])
    half = slice(len(evidence.batch[0].times) // 2, None)
    bs_w = {fb: float(np.median(p.width[..., half])) for fb, p in bs.items()}
    bs_loc = {b: float(np.mean([bs[(f, b)].share[..., half] > loc for f in ("NLGP", "Kur")])) for b in batches}
    bs_loc_kur = {b: float(np.mean(bs[("Kur", b)].share[..., half] > loc)) for b in batches}
    # twice the length-scales
    wide = {f: localized_median(evidence.points[f"{f}_wide"][0], "width") for f in ("NLGP", "Kur")}
    flow_w = {
        (f, which): evidence.flow[(f, which)].width[int(np.argmin(np.abs(evidence.flow[(f, which)].params - value)))]
        for f, value in (("NLGP", 0.2783), ("Kur", 6.1))
        for which in ("paper", "wide")
    }

    def count(fp):
        return int(pts[fp].localized.sum())

    nlgp_text = ", ".join(
        f"{count(('NLGP', g))} at NLGP({g:g}) ({exk[('NLGP', g)]:+.2f})" for g in sorted(nlgp_g, reverse=True)
    )
    kur_text = ", ".join(
        f"{count(('Kur', k))} at Kur({k:g}) ({exk[('Kur', k)]:+.2f})"
        for k in sorted(record_ks, reverse=True)
        if k > 5.4
    )
    kurpos_text = ", ".join(
        f"{count(('Kur', k))} at Kur({k:g}) ({exk[('Kur', k)]:+.2f})" for k in sorted(kur_pos_k, reverse=True)
    )
    pos_pairs = [(exk[("Kur", k)], frac[("Kur", k)]) for k in kur_k if exk[("Kur", k)] > 0]
    w_nlgp, w_kur = width[("NLGP", 0.278)], width[("Kur", 6.1)]
    dw_all = np.concatenate(dw)
    glue = {
        "nlgp-frac-text": nlgp_text + " localize",
        "kur-frac-text": kur_text,
        "kurpos-frac-text": kurpos_text,
        "nlgp-most-exk": exk[("NLGP", min(most_g))],
        "nlgp-half-exk": min(exk[("NLGP", g)] for g in nlgp_g if g not in most_g),
        "nlgp01-exk": exk[("NLGP", 0.1)],
        "kur54-loc": count(("Kur", 5.4)),
        "kur-pos-max-exk": max(e for e, f in pos_pairs if f > 0.5),
        "kur-pos-half-exk": min(e for e, f in pos_pairs if f <= 0.5),
        "tloc-med": tloc_med,
        "tloc-share": round(tloc_share, 4),
        "dw-max": int(dw_all.max()),
        "dw1-share": round(float(np.mean(dw_all <= 1)), 4),
        "ipr-move": round(float(np.median(np.concatenate(ipr_move))), 4),
        "w-nlgp": w_nlgp,
        "w-kur": w_kur,
        "ipr-nlgp": round(ipr[("NLGP", 0.278)], 4),
        "ipr-kur": round(ipr[("Kur", 6.1)], 4),
        "w-nlgp019": width[("NLGP", 0.19)],
        "w-kur585": width[("Kur", 5.85)],
        "flow-nlgp-born-g": born["NLGP"][0],
        "flow-kur-born-k": born["Kur"][0],
        "flow-nlgp-born-w": born["NLGP"][1],
        "flow-kur-born-w": born["Kur"][1],
        "flow-sgd-dw": int(max(flow_dw)),
        "bs-dw-25k": max(abs(bs_w[(f, 25_000)] - bs_w[(f, 5000)]) for f in ("NLGP", "Kur")),
        "bs-loc-1k": round(bs_loc[1000], 4),
        "bs-loc-5k": round(bs_loc[5000], 4),
        "bs-loc-kur-5k": round(bs_loc_kur[5000], 4),
        "bs-loc-kur-25k": round(bs_loc_kur[25_000], 4),
        "bs-w-nlgp-5k": bs_w[("NLGP", 5000)],
        "bs-w-nlgp-25k": bs_w[("NLGP", 25_000)],
        "bs-w-kur-5k": bs_w[("Kur", 5000)],
        "bs-w-kur-25k": bs_w[("Kur", 25_000)],
        "bs-T": evidence.batch_record["settings"]["steps"] * evidence.batch_record["settings"]["lr"],
        "flow-nlgp-loc-g": first_loc["NLGP"],
        "flow-kur-loc-k": first_loc["Kur"],
        "end-lost": end_lost,
        "end-new": end_new,
        "end-dw-max": end_dw,
        "wide-text": (
            f"{w_nlgp:g} to {wide['NLGP']:g} sites for NLGP(0.278) and {w_kur:g} to {wide['Kur']:g} for Kur(6.1)"
        ),
        "flow-wide-text": (
            f"{flow_w[('NLGP', 'paper')]} to {flow_w[('NLGP', 'wide')]} and "
            f"{flow_w[('Kur', 'paper')]} to {flow_w[('Kur', 'wide')]}"
        ),
    }
    return NearZeroFindings(
        points=pts,
        fraction=frac,
        excess_kurtosis=exk,
        nlgp_g=nlgp_g,
        kur_k=kur_k,
        kur_pos_k=kur_pos_k,
        most_g=most_g,
        most_k=most_k,
        tloc_med=tloc_med,
        tloc_share=tloc_share,
        stay=np.concatenate(stay),
        dw=dw_all,
        ipr_move=np.concatenate(ipr_move),
        end_lost=end_lost,
        end_new=end_new,
        end_dw=end_dw,
        width=width,
        ipr=ipr,
        flow_points=flow_points,
        born=born,
        first_localized=first_loc,
        flow_sgd_dw=flow_dw,
        batch_width=bs_w,
        batch_loc=bs_loc,
        batch_loc_kur=bs_loc_kur,
        wide_width=wide,
        flow_width=flow_w,
        glue=glue,
    )
