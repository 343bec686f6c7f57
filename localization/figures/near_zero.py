r"""The simulation chapter's figure of the fields just below zero excess kurtosis (``book/simulation.md``).

:func:`near_zero_bumps` draws, against the excess kurtosis, whether SGD's fields at the paper's Fig. 5
settings are localized (their localization share) and how wide their bump is, from the recorded
sweeps ``book/data/fig5_near_zero.json`` and ``book/data/fig5_near_zero_positive.json`` (several
seeds), with the same two measures of the effective flow's stable fixed point. What it draws is
computed by :func:`localization.experiments.near_zero_summary.near_zero_evidence` (the records'
summaries, the batch scan ``book/data/fig5_batch_scan.json`` and the flow along
``bump_flow.FLOW_GRID``); what the chapter states of it by
:func:`localization.experiments.near_zero_summary.near_zero_findings`.
"""

from __future__ import annotations

from localization import plotting
from localization.experiments import near_zero_summary
from localization.experiments.near_zero_summary import NearZeroEvidence
from localization.field_analysis import LOCALIZED_SHARE
from localization.figures.registry import Built, check_scale, new_figure, register
from localization.figures.simulation import read_record

__all__ = [
    "NEAR_ZERO_RECORD_PATH",
    "POSITIVE_RECORD_PATH",
    "BATCH_SCAN_RECORD_PATH",
    "near_zero_bumps",
]

#: The recorded near-zero sweep (``python -m localization.experiments.runs near_zero PATH``).
NEAR_ZERO_RECORD_PATH = "book/data/fig5_near_zero.json"
#: Kur between 5.4 and 5.8 (``python -m localization.experiments.runs near_zero_positive PATH``).
POSITIVE_RECORD_PATH = "book/data/fig5_near_zero_positive.json"
#: The recorded batch scan (``python -m localization.experiments.runs near_zero_batch PATH``).
BATCH_SCAN_RECORD_PATH = "book/data/fig5_batch_scan.json"
_STYLE = {"NLGP": ("o", "C0", "NLGP($g$)"), "Kur": ("s", "C3", "Kur($k$)")}


@register("near_zero_bumps", "simulation")
def near_zero_bumps(scale: str = "chapter") -> Built:
    """Build the fields just below zero excess kurtosis: localized or not, and how wide, in SGD and in the flow.

    Top: the localization share at the end of training (t = 1000; median and 10–90 % range over the
    record's seeds and initialisations) against the excess kurtosis, NLGP (circles) and Kur
    (squares), with the share of the effective flow's stable fixed point (lines); dotted, the
    threshold 0.8 of the definition. Bottom: the bump width (sites holding 80 % of ``|w|²``), the
    same way, at the paper's ξ = (0.3, 0.7) (filled markers, solid lines) and at ξ = (0.6, 1.4)
    (open markers, dashed lines). The batch scan is summarised in the data, not drawn (the chapter
    states it). Records read from :data:`NEAR_ZERO_RECORD_PATH`, :data:`POSITIVE_RECORD_PATH` and
    :data:`BATCH_SCAN_RECORD_PATH` (the same at both scales); the flow is computed (float64) by
    ``near_zero_summary.near_zero_evidence``.

    Parameters
    ----------
    scale : {"chapter", "paper"}
        Accepted for the registry; the records are the same.

    Returns
    -------
    Built
        The figure and a ``near_zero_summary.NearZeroEvidence``.
    """
    import localization

    check_scale(scale)
    localization.enable_float64()
    evidence = near_zero_summary.near_zero_evidence(
        read_record(NEAR_ZERO_RECORD_PATH), read_record(POSITIVE_RECORD_PATH), read_record(BATCH_SCAN_RECORD_PATH)
    )
    points = evidence.points
    groups = {
        "NLGP": points.get("NLGP", []),
        "Kur": points.get("Kur", []) + points["Kur_positive"],
        "NLGP_wide": points.get("NLGP_wide", []),
        "Kur_wide": points.get("Kur_wide", []),
    }
    spreads = {group: near_zero_summary.end_spread(pts) for group, pts in groups.items() if pts}
    fig = new_figure((plotting.COLUMN_WIDTH, 5.6), layout="constrained")
    _draw(fig, evidence, spreads)
    return Built(fig, evidence)


def _draw(fig, evidence: NearZeroEvidence, spreads: dict) -> None:
    """Draw the share (top) and width (bottom) panels: SGD's ``spreads`` (group → ``EndSpread``) and the flow."""
    # two panels: the batch scan is stated in the text (a third panel put the page over its weight cap)
    ax_share, ax_width = fig.subplots(2, 1)
    for family in ("NLGP", "Kur"):
        marker, color, label = _STYLE[family]
        for group, filled in ((family, True), (f"{family}_wide", False)):
            if group not in spreads:
                continue
            sp = spreads[group]
            kw = dict(fmt=marker, color=color, ms=5, capsize=2, mfc=None if filled else "none")
            if filled:
                ax_share.errorbar(sp.excess_kurtosis, sp.share, yerr=sp.share_err, label=f"{label}, SGD", **kw)
            wide = "" if filled else ", wide $\\xi$"
            ax_width.errorbar(sp.excess_kurtosis, sp.width, yerr=sp.width_err, label=f"{label}, SGD{wide}", **kw)
        for which, ls in (("paper", "-"), ("wide", "--")):
            curve = evidence.flow[(family, which)]
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
