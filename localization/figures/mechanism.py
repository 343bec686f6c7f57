r"""The mechanism chapter's figures (``book/mechanism.md``: why a super-linear φ localizes).

Each figure is one registered builder, called by the chapter and by ``python -m localization figures``:
it computes with :mod:`localization.experiments.mechanism` (the chapter's settings, tasks and flows)
and draws with the functions of :mod:`localization.figures.flows`:

* :func:`mechanism_gain` — the effective gain :math:`G(a)=\varphi(a)/a` of the three tasks;
* :func:`mechanism_flow` — weights and their local average along the flow, same start;
* :func:`mechanism_ipr` — the IPR along the flow and the two parts of its rate;
* :func:`mechanism_onset_scaling` — the excess kurtosis at the onset of the constant state's
  instability against N (:mod:`localization.experiments.onset_scaling`).
"""

from __future__ import annotations

import matplotlib.ticker

from localization import book
from localization.experiments import mechanism as em
from localization.experiments import onset_scaling
from localization.figures.flows import draw_flow_snapshots, draw_gain, draw_ipr_split
from localization.figures.registry import Built, check_scale, new_figure, register

__all__ = [
    "COLORS",
    "mechanism_gain",
    "mechanism_flow",
    "mechanism_ipr",
    "mechanism_onset_scaling",
    "draw_onset_scaling",
]

#: Colour of each task in the chapter's figures.
COLORS = {"Gaussian": "0.35", "NLGP(3)": "C3", "Kur(5)": "C0"}


@register("mechanism_gain", "mechanism")
def mechanism_gain(scale: str = "chapter") -> Built:
    """Draw the effective gain φ(a)/a of Gaussian, NLGP(3) and Kur(5) data, in units of √(2/π).

    ξ = (1, 3), N = 40, with the argument of each task's constant state dotted (exact quadrature,
    the same at both scales).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The same figure at both scales.

    Returns
    -------
    Built
        The figure and its :class:`~localization.experiments.mechanism.GainData` (the chapter reads
        the stability of the constant states).
    """
    check_scale(scale)
    gain = em.gain_data(em.setup())
    fig = new_figure((6.8, 3.6), layout="constrained")
    alphas = {name: st.alpha for name, st in gain.stability.items()}
    draw_gain(fig.subplots(), gain.a, gain.gains, alphas, colors=COLORS)
    return Built(fig, gain)


@register("mechanism_flow", "mechanism")
def mechanism_flow(scale: str = "chapter") -> Built:
    """Draw the flow at work: weights and their local average Σ₁w/s, one start, three flows.

    At t = 0, 5, 10, 20, 200 under the linear, NLGP(3) and Kur(5) flows from one random start (book
    key ("mechanism", "w0"); forward Euler, step 0.05; the same at both scales).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The same figure at both scales.

    Returns
    -------
    Built
        The figure and the flows (task name → one start's trajectory,
        :func:`localization.experiments.mechanism.integrate_flows`).
    """
    check_scale(scale)
    setting = em.setup()
    steps = [int(round(t / em.FLOW_LR)) for t in em.SNAPSHOT_TIMES]
    flows = em.integrate_flows(book.key("mechanism", "w0"), setting, steps[-1])
    fig = new_figure((6.8, 6.6), layout="constrained")
    axes = fig.subplots(3, len(steps), sharex=True, sharey="row")
    draw_flow_snapshots(axes, flows, {name: cov[1] for name, cov in setting.cov.items()}, steps, colors=COLORS)
    return Built(fig, flows)


@register("mechanism_ipr", "mechanism")
def mechanism_ipr(scale: str = "chapter") -> Built:
    """Draw the IPR along the flows of ``mechanism_flow`` and the two parts of its rate.

    The linear-flow part and the gain part (gain ≠ √(2/π)) for NLGP(3) and Kur(5) (the same at both
    scales).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The same figure at both scales.

    Returns
    -------
    Built
        The figure and the splits (task name → the ``(linear, nonlinear)`` parts of the IPR's rate
        along its flow, each (C,), :func:`localization.experiments.mechanism.ipr_splits`).
    """
    check_scale(scale)
    setting = em.setup()
    flows = em.integrate_flows(book.key("mechanism", "w0"), setting, int(round(em.SNAPSHOT_TIMES[-1] / em.FLOW_LR)))
    splits = em.ipr_splits(setting, flows)
    fig = new_figure((6.8, 7.0), layout="constrained")
    draw_ipr_split(fig.subplots(2, 1), flows, splits, setting.n, colors=COLORS, tmax=100)
    return Built(fig, splits)


def draw_onset_scaling(ax, scalings: dict) -> None:
    """Draw the size of κ* against N on log-log axes, one family per entry, with the leading-order law dashed.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    scalings : dict[str, OnsetScaling]
        Family name -> :func:`localization.experiments.onset_scaling.onset_scaling`.
    """
    colors = {"NLGP": COLORS["NLGP(3)"], "Kur": COLORS["Kur(5)"]}
    for family, sc in scalings.items():
        ns = [o.n for o in sc.onsets]
        kappa = [o.excess_kurtosis for o in sc.onsets]
        sign = "−" if kappa[-1] < 0 else "+"
        ax.loglog(ns, [abs(k) for k in kappa], "o-", color=colors[family], label=f"{family}: κ* ({sign})")
        law = sc.predicted.kurtosis
        ax.loglog(
            ns,
            [abs(law.constant) * n**law.exponent for n in ns],
            "--",
            color=colors[family],
            lw=1,
            label=f"{family}: leading order ∝ N^{law.exponent:.2f}",
        )
    ax.set_xticks([40, 80, 160, 320, 640], labels=["40", "80", "160", "320", "640"])
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("N (ring size)")
    ax.set_ylabel("|excess kurtosis| at the onset")
    ax.legend(frameon=False)  # the base size: the figure is drawn at 0.6 scale on phones


@register("mechanism_onset_scaling", "mechanism")
def mechanism_onset_scaling(scale: str = "chapter") -> Built:
    """Draw where the constant state loses stability, as excess kurtosis against N (NLGP and Kur).

    ξ = (1, 3), N = 40–640, Brent's method on ρ − threshold (deterministic; the same at both scales).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The same figure at both scales.

    Returns
    -------
    Built
        The figure and a dict family -> :class:`~localization.experiments.onset_scaling.OnsetScaling`.
    """
    check_scale(scale)
    scalings = {family: onset_scaling.onset_scaling(family=family) for family in ("NLGP", "Kur")}
    fig = new_figure((6.8, 3.8), layout="constrained")
    draw_onset_scaling(fig.subplots(), scalings)
    return Built(fig, scalings)
