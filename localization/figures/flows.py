r"""Drawing of the effective flow: the mechanism chapter's figures (:mod:`localization.figures.mechanism`).

Each function draws results computed by the caller (with :mod:`localization.theory.mechanism` and
:func:`localization.theory.integrate_effective`) on axes it is given, in the book style (no font
size of its own), and returns what it drew:

* :func:`draw_gain` — the effective gain :math:`G(a)=\varphi(a)/a` in units of the Gaussian slope,
  with the argument of the constant state dotted;
* :func:`draw_flow_snapshots` — weights and their local average :math:`a=\Sigma_1w/s` along the
  flow, one row per task, one column per time;
* :func:`draw_ipr_split` — the IPR along the flow, and the two parts of its rate
  (:func:`localization.theory.mechanism.ipr_rate_split`);
* :func:`draw_mode_shares` — SGD against the exact Gaussian flow's fixed point: the share of
  :math:`\|w\|^2` in the constant and the frequency-1 modes along training, and the final weights.

:func:`draw_mode_shares` draws the Gaussian chapter's SGD figure (its builder:
:mod:`localization.figures.gaussian`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from jax.typing import ArrayLike

from localization import metrics, plotting, theory
from localization import validation as v
from localization.theory.mechanism import GAUSSIAN_SLOPE
from localization.trajectory import Trajectory

__all__ = [
    "draw_gain",
    "draw_flow_snapshots",
    "draw_ipr_split",
    "draw_mode_shares",
]


def _colors(names: Sequence[str], colors: Mapping[str, Any] | None) -> dict[str, Any]:
    colors = {} if colors is None else dict(colors)
    return {name: colors.get(name, f"C{i}") for i, name in enumerate(names)}


def _trajectories(trajectories: Mapping[str, Any]) -> dict[str, Trajectory]:
    if not isinstance(trajectories, Mapping) or not trajectories:
        raise TypeError(f"trajectories must be a non-empty mapping name -> Trajectory, got {trajectories!r}")
    for name, tr in trajectories.items():
        if not isinstance(tr, Trajectory) or np.ndim(tr.weights) != 2:
            raise TypeError(f"trajectories[{name!r}] must be a Trajectory of one start, weights (C, N)")
    return dict(trajectories)


def draw_gain(
    ax: Any,
    a: ArrayLike,
    gains: Mapping[str, ArrayLike],
    alphas: Mapping[str, float],
    *,
    slope: float = GAUSSIAN_SLOPE,
    colors: Mapping[str, Any] | None = None,
) -> list[Any]:
    r"""Draw the gain :math:`G(a)/c` of each task on ``ax``, with its constant state's argument dotted.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The panel.
    a : array_like, shape (P,)
        The points of the gains.
    gains : mapping of str to array_like, each (P,)
        Task name → :math:`G(a)=\varphi(a)/a` on ``a``
        (:func:`localization.theory.mechanism.effective_gain`).
    alphas : mapping of str to float
        Task name → the argument :math:`\alpha` of its constant state
        (``constant_mode_stability(...).alpha``), a dotted vertical line; the names of ``gains``.
    slope : float
        The unit :math:`c` of the gains, √(2/π) (the Gaussian slope).
    colors : mapping of str to colour, optional
        Task name → colour (default: the colour cycle).

    Returns
    -------
    list of matplotlib.lines.Line2D
        The lines of the gains, with a legend.
    """
    a = np.asarray(v.float_array("a", a, ndim_min=1), dtype=np.float64)
    slope = v.positive("slope", slope)
    if set(alphas) != set(gains):
        raise ValueError(f"alphas must name the same tasks as gains ({sorted(gains)}), got {sorted(alphas)}")
    lines = []
    for name, color in _colors(list(gains), colors).items():
        g = np.asarray(gains[name], dtype=np.float64)
        if g.shape != a.shape:
            raise ValueError(f"gains[{name!r}] must have the shape of a {a.shape}, got {g.shape}")
        lines.append(ax.plot(a, g / slope, color=color, label=name)[0])
        ax.axvline(v.real_scalar(f"alphas[{name!r}]", alphas[name]), color=color, lw=0.8, ls=":")
    ax.set_xlabel("local average $a$")
    ax.set_ylabel(r"gain $G(a)/\sqrt{2/\pi}$")
    ax.set_title(r"Effective gain $\varphi(a)/a$ (dotted: $a$ of the constant state)")
    ax.legend()
    return lines


def draw_flow_snapshots(
    axes: Any,
    trajectories: Mapping[str, Trajectory],
    cov1: Mapping[str, ArrayLike],
    steps: Sequence[int],
    *,
    colors: Mapping[str, Any] | None = None,
) -> np.ndarray:
    r"""Draw weights and their local average :math:`a=\Sigma_1w/s` at some checkpoints of each flow.

    One row per task (its name on the left), one column per time (the time above); the weights
    (scaled to max 1) solid, the local average (scaled) dashed; one legend for the figure, below
    the panels.

    Parameters
    ----------
    axes : array of matplotlib.axes.Axes, shape (tasks, len(steps))
        The panels.
    trajectories : mapping of str to localization.trajectory.Trajectory
        Task name → one start's flow, weights (C, N).
    cov1 : mapping of str to array_like, each (N, N)
        Task name → its class-1 covariance :math:`\Sigma_1`.
    steps : sequence of int
        The checkpoints (steps, not times) to draw; each a checkpoint of every trajectory.
    colors : mapping of str to colour, optional
        Task name → colour (default: the colour cycle).

    Returns
    -------
    numpy.ndarray of Axes
        ``axes`` as a (tasks, len(steps)) array.
    """
    trajectories = _trajectories(trajectories)
    steps = [v.integer("steps[i]", s, 0) for s in steps]
    grid = plotting.axes_grid("axes", axes, (len(trajectories), len(steps)))
    colors = _colors(list(trajectories), colors)
    for row, (name, tr) in zip(grid, trajectories.items(), strict=True):
        recorded = [int(s) for s in np.asarray(tr.steps)]
        missing = [s for s in steps if s not in recorded]
        if missing:
            raise ValueError(f"steps {missing} are not checkpoints of trajectories[{name!r}]")
        weights = np.asarray(tr.weights, dtype=np.float64)
        sites = np.arange(weights.shape[-1])
        for ax, step in zip(row, steps, strict=True):
            w = weights[recorded.index(step)]
            a = np.asarray(theory.amplifier_argument(w, np.asarray(cov1[name], dtype=np.float64)))
            ax.plot(sites, w / np.max(np.abs(w)), color=colors[name], label="$w$ (scaled)")
            ax.plot(sites, a / np.max(np.abs(a)), color="k", ls="--", lw=1, label=r"$a=\Sigma_1w/s$ (scaled)")
            ax.axhline(0, color="0.8", lw=0.6)
        row[0].set_ylabel(name)
        row[0].set_ylim(-1.1, 1.1)
    times = np.asarray(next(iter(trajectories.values())).times)
    recorded = [int(s) for s in np.asarray(next(iter(trajectories.values())).steps)]
    for ax, step in zip(grid[0], steps, strict=True):
        ax.set_title(f"t = {times[recorded.index(step)]:g}")
    for ax in grid[-1]:
        ax.set_xlabel("site $i$")
    fig = grid[0, 0].figure
    fig.legend(*grid[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=2)
    return grid


def draw_ipr_split(
    axes: Any,
    trajectories: Mapping[str, Trajectory],
    splits: Mapping[str, tuple[ArrayLike, ArrayLike]],
    n: int,
    *,
    colors: Mapping[str, Any] | None = None,
    tmax: float = 100.0,
) -> np.ndarray:
    r"""Draw the IPR along each flow, and the two parts of its rate for some of them.

    Parameters
    ----------
    axes : array of matplotlib.axes.Axes, shape (2,)
        The panels: the IPR along each trajectory (with :math:`1/N` dotted); the linear-flow part
        (grey) and the gain part (the task's colour) of :math:`\dot P` of each task in ``splits``,
        solid for the first task, dashed for the next, up to time ``tmax``.
    trajectories : mapping of str to localization.trajectory.Trajectory
        Task name → one start's flow, weights (C, N).
    splits : mapping of str to (array_like, array_like)
        Task name → the ``(linear, nonlinear)`` parts of :math:`\dot P` along its trajectory, each
        (C,) (:func:`localization.theory.mechanism.ipr_rate_split`); names of ``trajectories``.
    n : int
        The ring size N (the IPR of the constant state is 1/N).
    colors : mapping of str to colour, optional
        Task name → colour (default: the colour cycle).
    tmax : float
        The last time of the second panel.

    Returns
    -------
    numpy.ndarray of Axes
        The two panels.
    """
    trajectories = _trajectories(trajectories)
    n = v.integer("n", n, 1)
    tmax = v.positive("tmax", tmax)
    ax1, ax2 = plotting.axes_grid("axes", axes, (2,))
    colors = _colors(list(trajectories), colors)
    for name, tr in trajectories.items():
        ax1.plot(tr.times, np.asarray(metrics.ipr(tr.weights)), color=colors[name], label=name)
    ax1.axhline(1 / n, color="0.6", lw=0.8, ls=":")
    ax1.set_xlabel("time $t$")
    ax1.set_ylabel("IPR $P(w)$")
    ax1.set_title("Concentration")
    ax1.legend()
    for (name, (linear, nonlinear)), ls in zip(splits.items(), ("-", "--", ":", "-."), strict=False):
        if name not in trajectories:
            raise ValueError(f"splits names {name!r}, which is not one of the trajectories {list(trajectories)}")
        t = np.asarray(trajectories[name].times)
        ax2.plot(t, linear, color="0.4", ls=ls, label=f"{name}: linear flow")
        ax2.plot(t, nonlinear, color=colors[name], ls=ls, label=f"{name}: gain $\\neq c$")
    ax2.axhline(0, color="0.8", lw=0.6)
    ax2.set_xlim(0, tmax)
    ax2.set_xlabel("time $t$")
    ax2.set_ylabel(r"contribution to $\dot P$")
    ax2.set_title(r"The two parts of $\dot P$")
    ax2.legend()
    return np.array([ax1, ax2], dtype=object)


def draw_mode_shares(axes: Any, times: ArrayLike, shares: ArrayLike, final: ArrayLike, amplitude: float) -> np.ndarray:
    r"""Draw SGD runs against a fixed point of the flow: mode shares along training, final weights.

    Parameters
    ----------
    axes : array of matplotlib.axes.Axes, shape (2,)
        The panels: the share of :math:`\|w\|^2` in the constant mode (blue) and in the frequency-1
        pair (red) of every run against time; every run's final weights (grey) with
        :math:`\pm` ``amplitude`` :math:`/\sqrt N` dashed (the constant fixed point's entries).
    times : array_like, shape (C,)
        The checkpoint times.
    shares : array_like, shape (R, C, F)
        Share of :math:`\|w\|^2` per frequency of each run at each checkpoint
        (:func:`localization.field_analysis.frequency_power`), F ≥ 2.
    final : array_like, shape (R, N)
        Each run's final weights.
    amplitude : float
        The amplitude :math:`|u|` of the constant fixed point.

    Returns
    -------
    numpy.ndarray of Axes
        The two panels.
    """
    times = np.asarray(v.float_array("times", times, ndim_min=1), dtype=np.float64)
    shares = np.asarray(v.float_array("shares", shares, ndim_min=3), dtype=np.float64)
    final = np.asarray(v.float_array("final", final, ndim_min=2), dtype=np.float64)
    amplitude = v.positive("amplitude", amplitude)
    if shares.ndim != 3 or shares.shape[1] != times.shape[0] or shares.shape[2] < 2:
        raise ValueError(f"shares must have the shape (runs, {times.shape[0]}, F >= 2), got {shares.shape}")
    if final.ndim != 2 or final.shape[0] != shares.shape[0]:
        raise ValueError(f"final must have the shape ({shares.shape[0]}, N), got {final.shape}")
    ax1, ax2 = plotting.axes_grid("axes", axes, (2,))
    for run in shares:
        ax1.plot(times, run[:, 0], color="C0", alpha=0.3, lw=0.8)
        ax1.plot(times, run[:, 1], color="C3", alpha=0.3, lw=0.8)
    ax1.set(xlabel="time $t$", ylabel=r"share of $\|w\|^2$", title="SGD: constant (blue),\n|k| = 1 (red)")
    n = final.shape[1]
    ax2.plot(np.arange(n), final.T, color="0.5", alpha=0.4, lw=0.8)
    for sign in (1, -1):
        ax2.axhline(sign * amplitude / np.sqrt(n), color="C3", ls="--", lw=1)
    ax2.set(xlabel="position $i$", ylabel="$w_i$", title=f"SGD at t = {times[-1]:g};\nEq. (gauss-fixed) dashed")
    return np.array([ax1, ax2], dtype=object)
