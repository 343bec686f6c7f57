r"""The simulation chapter's figure of the fields just below zero excess kurtosis (``book/simulation.md``).

:func:`near_zero_bumps` draws, against the excess kurtosis, whether SGD's fields at the paper's Fig. 5
settings are localized (their localization share) and how wide their bump is, from the recorded
sweep ``book/data/fig5_near_zero.json`` (several seeds), with the same two measures of the
effective flow's stable fixed point (:mod:`localization.experiments.bump_flow`, computed here), and
the width against the batch from ``book/data/fig5_batch_scan.json``.

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
