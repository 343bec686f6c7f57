r"""The mechanism chapter's figures (``book/mechanism.md``: why a super-linear φ localizes).

Each figure is one registered builder, called by the chapter and by ``python -m localization figures``,
holding the chapter's settings (module constants), its computation and its drawing:

* :func:`mechanism_gain` — the effective gain :math:`G(a)=\varphi(a)/a` of the three tasks;
* :func:`mechanism_flow` — weights and their local average along the flow, same start;
* :func:`mechanism_ipr` — the IPR along the flow and the two parts of its rate.

The drawing functions draw results computed by the caller (with
:mod:`localization.theory.mechanism` and :func:`localization.theory.integrate_effective`) on axes
they are given, in the book style (no font size of their own), and return what they drew:

* :func:`draw_gain` — the effective gain in units of the Gaussian slope, with the argument of the
  constant state dotted;
* :func:`draw_flow_snapshots` — weights and their local average :math:`a=\Sigma_1w/s` along the
  flow, one row per task, one column per time;
* :func:`draw_ipr_split` — the IPR along the flow, and the two parts of its rate
  (:func:`localization.theory.mechanism.ipr_rate_split`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from localization import plotting, theory
from localization import validation as v
from localization.figures.registry import Built, check_scale, new_figure, register
from localization.theory.mechanism import GAUSSIAN_SLOPE
from localization.trajectory import Trajectory

__all__ = [
    "N",
    "XI",
    "COLORS",
    "FLOW_LR",
    "SNAPSHOT_TIMES",
    "GAIN_GRID",
    "Setup",
    "setup",
    "integrate_flows",
    "GainData",
    "mechanism_gain",
    "mechanism_flow",
    "mechanism_ipr",
    "draw_gain",
    "draw_flow_snapshots",
    "draw_ipr_split",
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
    a: Any,
    gains: Mapping[str, Any],
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
    cov1: Mapping[str, Any],
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
    trajectories : mapping of str to Trajectory
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
    splits: Mapping[str, tuple[Any, Any]],
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
    trajectories : mapping of str to Trajectory
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
        w = np.asarray(tr.weights, dtype=np.float64)
        ax1.plot(tr.times, np.sum(w**4, -1) / np.sum(w**2, -1) ** 2, color=colors[name], label=name)
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


# -------------------------------------------------------------------------------------------------
# the chapter's figures (also written by `python -m localization figures`)
# -------------------------------------------------------------------------------------------------
#: The chapter's ring size and length-scales ξ = (ξ₀, ξ₁).
N, XI = 40, (1.0, 3.0)
#: Colour of each task in the chapter's figures.
COLORS = {"Gaussian": "0.35", "NLGP(3)": "C3", "Kur(5)": "C0"}
#: Forward-Euler step of the flows (time = steps × step).
FLOW_LR = 0.05
#: Times of the snapshots of ``mechanism_flow``.
SNAPSHOT_TIMES = (0.0, 5.0, 10.0, 20.0, 200.0)
#: The points a of the gain curves of ``mechanism_gain``.
GAIN_GRID = np.linspace(1e-3, 1.0, 400)


class Setup(NamedTuple):
    """The chapter's tasks and what the flow needs of them (see :func:`setup`).

    Attributes
    ----------
    n : int
        Ring size :data:`N`.
    tasks : dict
        Name → :class:`localization.data.LengthscaleTask` (Gaussian, NLGP(3), Kur(5) at ξ = :data:`XI`).
    cov : dict
        Name → ``(cov0, cov1)``, the class covariances, each (n, n).
    phi : dict
        Name → the exact amplifier of the class-1 marginal (quadrature).
    fast : dict
        Name → the tabulated amplifier (for flow integrations).
    """

    n: int
    tasks: dict[str, Any]
    cov: dict[str, tuple[np.ndarray, np.ndarray]]
    phi: dict[str, Any]
    fast: dict[str, Any]


def setup() -> Setup:
    """Return the mechanism chapter's tasks (Gaussian, NLGP(3), Kur(5) at ξ = (1, 3), N = 40).

    Returns
    -------
    Setup
        Tasks, covariances, exact and tabulated amplifiers.
    """
    from localization import data

    tasks = {
        "Gaussian": data.LengthscaleTask.of(data.Gaussian, xi=XI),
        "NLGP(3)": data.LengthscaleTask.of(data.NLGP, xi=XI, gain=3.0),
        "Kur(5)": data.LengthscaleTask.of(data.Kur, xi=XI, k=5.0),
    }
    phi = {name: theory.amplifier_of(task.model1.marginal) for name, task in tasks.items()}
    return Setup(
        n=N,
        tasks=tasks,
        cov={name: task.covariances(N) for name, task in tasks.items()},
        phi=phi,
        fast={name: theory.tabulate_amplifier(p) for name, p in phi.items()},
    )


def integrate_flows(setting: Setup, steps: int) -> dict[str, Trajectory]:
    """Integrate the chapter's flows from its first random start, book key ``("mechanism", "w0")``.

    Forward Euler with step :data:`FLOW_LR` (Eq. (mech-flow)), the linear φ (slope √(2/π)) for the
    Gaussian task and the tabulated φ for the others, checkpoints every 20 steps.

    Parameters
    ----------
    setting : Setup
        The chapter's tasks (:func:`setup`).
    steps : int
        Number of Euler steps, a multiple of 20.

    Returns
    -------
    dict
        Task name → :class:`~localization.trajectory.Trajectory` of one start, weights (C, N).
    """
    import jax

    from localization import book

    steps = v.integer("steps", steps, 20)
    if steps % 20:
        raise ValueError(f"steps must be a multiple of 20 (the checkpoint spacing), got {steps}")
    w0 = np.asarray(jax.random.normal(book.key("mechanism", "w0"), (8, setting.n), dtype=np.float64))
    flows = {}
    for name in setting.tasks:
        phi = (lambda a: GAUSSIAN_SLOPE * a) if name == "Gaussian" else setting.fast[name]
        flows[name] = theory.integrate_effective(
            w0[0], phi, *setting.cov[name], lr=FLOW_LR, steps=steps, checkpoints=np.arange(0, steps + 1, 20)
        )
    return flows


class GainData(NamedTuple):
    """What ``mechanism_gain`` shows.

    Attributes
    ----------
    a : numpy.ndarray
        The points :data:`GAIN_GRID`, (400,).
    gains : dict
        Task name → the gain φ(a)/a on ``a``, (400,).
    stability : dict
        Task name → :class:`localization.theory.mechanism.ConstantModeStability` of its constant state.
    """

    a: np.ndarray
    gains: dict[str, np.ndarray]
    stability: dict[str, Any]


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
        The figure and its :class:`GainData` (the chapter reads the stability of the constant states).
    """
    from localization.theory import mechanism as mech

    check_scale(scale)
    setting = setup()
    gains = {name: mech.effective_gain(phi, GAIN_GRID) for name, phi in setting.phi.items()}
    stability = {name: mech.constant_mode_stability(setting.phi[name], *setting.cov[name]) for name in gains}
    fig = new_figure((6.8, 3.6), layout="constrained")
    alphas = {name: st.alpha for name, st in stability.items()}
    draw_gain(fig.subplots(), GAIN_GRID, gains, alphas, colors=COLORS)
    return Built(fig, GainData(GAIN_GRID, gains, stability))


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
        The figure and the flows (task name → one start's trajectory, :func:`integrate_flows`).
    """
    check_scale(scale)
    setting = setup()
    steps = [int(round(t / FLOW_LR)) for t in SNAPSHOT_TIMES]
    flows = integrate_flows(setting, steps[-1])
    fig = new_figure((6.8, 6.6), layout="constrained")
    axes = fig.subplots(3, len(steps), sharex=True, sharey="row")
    draw_flow_snapshots(axes, flows, {name: cov[1] for name, cov in setting.cov.items()}, steps, colors=COLORS)
    fig.suptitle("The flow at work: weights and their local average, same start")
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
        along its flow, each (C,), :func:`localization.theory.mechanism.ipr_rate_split`).
    """
    from localization.theory import mechanism as mech

    check_scale(scale)
    setting = setup()
    flows = integrate_flows(setting, int(round(SNAPSHOT_TIMES[-1] / FLOW_LR)))
    splits = {
        name: mech.ipr_rate_split(np.asarray(flows[name].weights), setting.phi[name], *setting.cov[name])
        for name in ("NLGP(3)", "Kur(5)")
    }
    fig = new_figure((6.8, 7.0), layout="constrained")
    draw_ipr_split(fig.subplots(2, 1), flows, splits, setting.n, colors=COLORS, tmax=100)
    return Built(fig, splits)
