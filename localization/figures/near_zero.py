r"""The simulation chapter's figure of the fields just below zero excess kurtosis (``book/simulation.md``).

:func:`near_zero_bumps` draws, against the excess kurtosis, whether SGD's fields at the paper's Fig. 5
settings are localized (their localization share) and how wide their bump is, from the recorded
sweep ``book/data/fig5_near_zero.json`` (several seeds), with the same two measures of the
effective flow's stable fixed point (:mod:`localization.experiments.bump_flow`, computed here), and
the width against the batch from ``book/data/fig5_batch_scan.json``. :func:`near_zero_findings`
summarises the records and the flow as the chapter states them (:class:`NearZeroFindings`).

Settings (module constants, which the chapter quotes): :data:`FLOW_GRID` and :data:`FLOW_GRID_WIDE`
(the family parameters at which the flow's fixed point is computed).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from localization import data, plotting
from localization.experiments import bump_flow, near_zero_summary
from localization.field_analysis import LOCALIZED_SHARE
from localization.figures.registry import Built, check_scale, new_figure, register
from localization.figures.simulation import read_record

__all__ = [
    "NEAR_ZERO_RECORD_PATH",
    "POSITIVE_RECORD_PATH",
    "BATCH_SCAN_RECORD_PATH",
    "FLOW_GRID",
    "FLOW_GRID_WIDE",
    "FlowCurve",
    "NearZeroFigure",
    "near_zero_bumps",
    "NearZeroFindings",
    "localized_median",
    "near_zero_findings",
]

#: The recorded near-zero sweep (``python -m localization.experiments.runs near_zero PATH``).
NEAR_ZERO_RECORD_PATH = "book/data/fig5_near_zero.json"
#: Kur between 5.4 and 5.8 (``python -m localization.experiments.runs near_zero_positive PATH``).
POSITIVE_RECORD_PATH = "book/data/fig5_near_zero_positive.json"
#: The recorded batch scan (``python -m localization.experiments.runs near_zero_batch PATH``).
BATCH_SCAN_RECORD_PATH = "book/data/fig5_batch_scan.json"
_G = dict(zip(("0.1", "0.167", "0.278", "0.464"), (float(g) for g in np.logspace(-1.0, 1.0, 10)[:4]), strict=True))
#: Family parameters of the flow's fixed points at the paper's ξ = (0.3, 0.7): the record's values and more.
FLOW_GRID = {
    "NLGP": (_G["0.1"], 0.12, 0.14, _G["0.167"], 0.19, 0.22, 0.25, _G["0.278"], 0.36, _G["0.464"]),
    "Kur": (5.6, 5.8, 5.85, 5.9, 6.0, 6.1, 6.3, 6.6, 7.0, 7.7),
}
#: ... and at twice those length-scales, ξ = (0.6, 1.4) (``near_zero.NEAR_ZERO.wide_xi``).
FLOW_GRID_WIDE = {
    "NLGP": (_G["0.167"], 0.19, 0.22, 0.25, _G["0.278"], 0.36, _G["0.464"]),
    "Kur": (5.75, 5.8, 5.85, 5.9, 6.1, 6.6, 7.7),
}
_STYLE = {"NLGP": ("o", "C0", "NLGP($g$)"), "Kur": ("s", "C3", "Kur($k$)")}


class FlowCurve(NamedTuple):
    """The effective flow's fixed points along one family at one pair of length-scales.

    Attributes
    ----------
    family : str; xi : (ξ₀, ξ₁); params, excess_kurtosis : (P,).
    bumps : list of ``bump_flow.FlowBump`` (P), in the order of ``params``.
    constant_growth : (P,) ``bump_flow.constant_growth`` (the constant field's largest eigenvalue).
    """

    family: str
    xi: tuple
    params: np.ndarray
    excess_kurtosis: np.ndarray
    bumps: list
    constant_growth: np.ndarray

    @property
    def share(self) -> np.ndarray:
        """(P,) localization share of each fixed point."""
        return np.array([b.share for b in self.bumps])

    @property
    def width(self) -> np.ndarray:
        """(P,) bump width (sites) of each fixed point."""
        return np.array([b.width for b in self.bumps])


class NearZeroFigure(NamedTuple):
    """What :func:`near_zero_bumps` draws.

    Attributes
    ----------
    record, positive_record, batch_record : the three JSON records.
    points : group (``"NLGP"``, ``"Kur"``, ``"NLGP_wide"``, ``"Kur_wide"`` of ``record``, and
        ``"Kur_positive"``, the Kur values of ``positive_record``) → list of
        ``near_zero_summary.NearZeroPoint``.
    flow : (family, "paper" or "wide") → :class:`FlowCurve`.
    batch : list of ``near_zero_summary.BatchPoint``.
    """

    record: dict
    positive_record: dict
    batch_record: dict
    points: dict
    flow: dict
    batch: list


def _flow_curve(family: str, params, xi) -> FlowCurve:
    tasks = [data.family_task(family, float(p), xi=tuple(xi)) for p in params]
    bumps = [bump_flow.flow_bump(t) for t in tasks]
    return FlowCurve(
        family=family,
        xi=tuple(xi),
        params=np.asarray(params, dtype=np.float64),
        excess_kurtosis=np.array([t.marginals[1].excess_kurtosis for t in tasks]),
        bumps=bumps,
        constant_growth=np.array([b.constant_growth for b in bumps]),
    )


def _spread(values: list) -> tuple[np.ndarray, np.ndarray]:
    """Median and the (below, above) distances to the 10th and 90th percentiles of each array of a list."""
    med = np.array([np.median(x) for x in values])
    lo, hi = np.array([np.percentile(x, [10, 90]) for x in values]).T
    return med, np.stack([med - lo, hi - med])


@register("near_zero_bumps", "simulation")
def near_zero_bumps(scale: str = "chapter") -> Built:
    """Build the fields just below zero excess kurtosis: localized or not, and how wide, in SGD and in the flow.

    Top: the localization share at the end of training (t = 1000; median and 10–90 % range over the
    record's seeds and initialisations) against the excess kurtosis, NLGP (circles) and Kur
    (squares), with the share of the effective flow's stable fixed point (lines); dotted, the
    threshold 0.8 of the definition. Middle: the bump width (sites holding 80 % of ``|w|²``), the
    same way, at the paper's ξ = (0.3, 0.7) (filled markers, solid lines) and at ξ = (0.6, 1.4)
    (open markers, dashed lines). Bottom: the width at several batches (median over the last half of
    the runs) for the batch scan's tasks, the flow's width as a horizontal line. Records read from
    :data:`NEAR_ZERO_RECORD_PATH`, :data:`POSITIVE_RECORD_PATH` and :data:`BATCH_SCAN_RECORD_PATH` (the
    same at both scales); the flow is computed (float64).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        Accepted for the registry; the records are the same.

    Returns
    -------
    Built
        The figure and a :class:`NearZeroFigure`.
    """
    import localization

    check_scale(scale)
    localization.enable_float64()
    record, batch_record = read_record(NEAR_ZERO_RECORD_PATH), read_record(BATCH_SCAN_RECORD_PATH)
    positive_record = read_record(POSITIVE_RECORD_PATH)
    groups = [g for g in ("NLGP", "Kur", "NLGP_wide", "Kur_wide") if g in record["seeds"][0]]
    points = {g: near_zero_summary.near_zero_summary(record, g) for g in groups}
    points["Kur_positive"] = near_zero_summary.near_zero_summary(positive_record, "Kur")
    wide = tuple(record["settings"]["wide_xi"])
    flow = {}
    for family in ("NLGP", "Kur"):
        flow[(family, "paper")] = _flow_curve(family, FLOW_GRID[family], tuple(record["settings"]["xi"]))
        flow[(family, "wide")] = _flow_curve(family, FLOW_GRID_WIDE[family], wide)
    batch = near_zero_summary.batch_scan_summary(batch_record)

    # two panels: the batch scan is stated in the text (a third panel put the page over its weight cap)
    fig = new_figure((plotting.COLUMN_WIDTH, 5.6), layout="constrained")
    ax_share, ax_width = fig.subplots(2, 1)
    for family in ("NLGP", "Kur"):
        marker, color, label = _STYLE[family]
        for group, filled in ((family, True), (f"{family}_wide", False)):
            pts = points.get(group, []) + (points["Kur_positive"] if group == "Kur" else [])
            if not pts:
                continue
            exk = np.array([p.excess_kurtosis for p in pts])
            share = [p.share[..., -1].ravel() for p in pts]
            width = [p.width[..., -1].ravel() for p in pts]
            kw = dict(fmt=marker, color=color, ms=5, capsize=2, mfc=None if filled else "none")
            if filled:
                med, err = _spread(share)
                ax_share.errorbar(exk, med, yerr=err, label=f"{label}, SGD", **kw)
            med, err = _spread(width)
            ax_width.errorbar(exk, med, yerr=err, label=f"{label}, SGD" + ("" if filled else ", wide $\\xi$"), **kw)
        for which, ls in (("paper", "-"), ("wide", "--")):
            curve = flow[(family, which)]
            if which == "paper":
                ax_share.plot(curve.excess_kurtosis, curve.share, ls, color=color, lw=1.2, label=f"{label}, flow")
            ax_width.plot(curve.excess_kurtosis, curve.width, ls, color=color, lw=1.2)
    ax_share.axhline(LOCALIZED_SHARE, color="0.4", ls=":", lw=1.2, label="localized above 0.8")
    ax_share.axvline(0, color="0.3", lw=1)
    ax_share.set_ylabel("localization share")
    ax_share.set_ylim(0.2, 1.02)
    ax_share.set_title("localized? (share of $\\|w\\|^2$ in a quarter of the ring), t = 1000")
    ax_share.legend(fontsize="small", ncols=2, loc="lower left")
    ax_width.axvline(0, color="0.3", lw=1)
    ax_width.set_ylabel("bump width (sites)")
    ax_width.set_title("how wide? solid: $\\xi = (0.3, 0.7)$, dashed: $\\xi = (0.6, 1.4)$ (lines: flow)")
    ax_width.legend(fontsize="small", loc="upper left")
    for ax in (ax_share, ax_width):
        ax.set_xlabel("excess kurtosis of the marginals (exact)")
    return Built(fig, NearZeroFigure(record, positive_record, batch_record, points, flow, batch))


class NearZeroFindings(NamedTuple):
    """What the chapter reads from a :class:`NearZeroFigure` (:func:`near_zero_findings`).

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
    point : near_zero_summary.NearZeroPoint
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


def near_zero_findings(fig: NearZeroFigure, t_mid: float = 500.0) -> NearZeroFindings:
    """Summarise the near-zero records and flow as the chapter states them (its check asserts).

    Parameters
    ----------
    fig : NearZeroFigure
        The data of :func:`near_zero_bumps`.
    t_mid : float
        The checkpoint time against which stationarity is read (default 500, the paper's t_end / 2).

    Returns
    -------
    NearZeroFindings
    """
    from localization.field_analysis import localization_window

    if not isinstance(fig, NearZeroFigure):
        raise TypeError(f"fig must be a NearZeroFigure, got {type(fig).__name__}")
    loc = LOCALIZED_SHARE
    pts = {(p.family, round(p.param, 3)): p for g in ("NLGP", "Kur", "Kur_positive") for p in fig.points[g]}
    frac = {fp: p.fraction for fp, p in pts.items()}
    exk = {fp: p.excess_kurtosis for fp, p in pts.items()}
    nlgp_g = sorted(g for f, g in pts if f == "NLGP")
    kur_k = sorted(k for f, k in pts if f == "Kur")
    kur_pos_k = sorted(round(p.param, 3) for p in fig.points["Kur_positive"])
    record_ks = list(fig.record["settings"]["ks"])
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
    n = int(fig.record["settings"]["n"])
    quarter = localization_window(n) / n
    every = [b for curve in fig.flow.values() for b in curve.bumps]
    flow_points = {
        "is_bump": np.array([b.share > quarter + 1e-6 for b in every]),
        "growth": np.array([b.constant_growth for b in every]),
        "other": np.array([b.largest_other for b in every]),
        "shift": np.array([b.translation for b in every]),
        "width": np.array([b.width for b in every]),
    }
    born, first_loc, flow_dw = {}, {}, []
    for family in ("NLGP", "Kur"):
        curve = fig.flow[(family, "paper")]
        i = int(np.argmax(curve.constant_growth > 0))
        born[family] = (float(curve.params[i]), curve.bumps[i].width)
        first_loc[family] = float(next(p for p, b in zip(curve.params, curve.bumps, strict=True) if b.localized))
        for p, b in zip(curve.params, curve.bumps, strict=True):
            pt = pts.get((family, round(float(p), 3)))
            if pt is not None and b.localized and pt.fraction > 0.5:
                flow_dw.append(abs(b.width - localized_median(pt, "width")))
    # the batch scan: over the last half of the runs, all fields
    bs = {(p.family, p.batch): p for p in fig.batch}
    batches = list(fig.batch_record["settings"]["batches"])
    half = slice(len(fig.batch[0].times) // 2, None)
    bs_w = {fb: float(np.median(p.width[..., half])) for fb, p in bs.items()}
    bs_loc = {b: float(np.mean([bs[(f, b)].share[..., half] > loc for f in ("NLGP", "Kur")])) for b in batches}
    bs_loc_kur = {b: float(np.mean(bs[("Kur", b)].share[..., half] > loc)) for b in batches}
    # twice the length-scales
    wide = {f: localized_median(fig.points[f"{f}_wide"][0], "width") for f in ("NLGP", "Kur")}
    flow_w = {
        (f, which): fig.flow[(f, which)].width[int(np.argmin(np.abs(fig.flow[(f, which)].params - v)))]
        for f, v in (("NLGP", 0.2783), ("Kur", 6.1))
        for which in ("paper", "wide")
    }

    def count(fp):
        return int(pts[fp].localized.sum())

    nlgp_text = ", ".join(
        f"{count(('NLGP', g))} at $g$ = {g:g} ({exk[('NLGP', g)]:+.2f})" for g in sorted(nlgp_g, reverse=True)
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
        "bs-T": fig.batch_record["settings"]["steps"] * fig.batch_record["settings"]["lr"],
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
