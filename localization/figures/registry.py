r"""The registry of figures that ``python -m localization figures`` writes, and :func:`render`.

Every entry computes its results with the library calls, settings and random keys of the chapter
that shows the figure (keys from :func:`localization.book.key`, so the book seed
``LOCALIZATION_SEED`` applies), and draws with the functions of :mod:`localization.figures.draw` or
:mod:`localization.plotting` that the chapter uses. Figures the paper has carry its numbering in
their names (``fig5_...``); the others name their chapter's figure.

Two scales:

* ``chapter`` — the chapter's settings, so the file is the chapter's figure (up to the last bits of
  float32 arithmetic, see the reproducibility page);
* ``paper`` — the paper's settings where the chapter uses smaller ones (each builder's docstring
  says which); a figure whose chapter already uses the paper's settings is the same at both scales.

A later chapter adds its figures with :func:`register`.
"""

from __future__ import annotations

import inspect
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "SCALES",
    "Built",
    "FigureEntry",
    "FIGURES",
    "register",
    "describe",
    "resolve_names",
    "render",
    "check_scale",
    "new_figure",
]

#: The scales a figure can be computed at (see the module docstring).
SCALES = ("chapter", "paper")


class Built(NamedTuple):
    """What a figure builder returns: the figure and the computed results its chapter reads.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
        The drawn figure (created with :func:`new_figure`, outside pyplot).
    data : Any
        The results the figure shows, for the chapter's checks and prose (each builder's docstring
        says what; ``None`` when the chapter reads nothing).
    """

    figure: Any
    data: Any


@dataclass(frozen=True)
class FigureEntry:
    """One registered figure.

    Attributes
    ----------
    name : file stem of the PNG (paper numbering where the paper has the figure).
    chapter : the book chapter (``book/<chapter>.md``) that shows it.
    description : one line for ``--help`` (the first paragraph of the builder's docstring).
    build : ``build(scale)`` → a :class:`Built` (figure and data).
    """

    name: str
    chapter: str
    description: str
    build: Callable[[str], Any]


#: name → :class:`FigureEntry`, in the order of ``--help``.
FIGURES: dict[str, FigureEntry] = {}


def register(name: str, chapter: str) -> Callable[[Callable[[str], Any]], Callable[[str], Any]]:
    """Decorator registering ``build(scale) -> Figure`` under ``name``; its docstring's first paragraph
    is the description ``--help`` shows (a builder without a docstring is refused)."""
    if not isinstance(name, str) or not name.replace("_", "").isalnum() or name in FIGURES:
        raise ValueError(f"name must be a new identifier-like figure name, got {name!r}")

    def decorate(build: Callable[[str], Any]) -> Callable[[str], Any]:
        doc = inspect.getdoc(build)
        if not doc:
            raise ValueError(f"the builder of figure {name!r} needs a docstring (its --help description)")
        description = " ".join(doc.split("\n\n")[0].split())
        FIGURES[name] = FigureEntry(name=name, chapter=chapter, description=description, build=build)
        return build

    return decorate


def describe(width: int = 100) -> str:
    """The figure list of ``--help``: one entry per figure, name, chapter and description."""
    import textwrap

    lines = []
    for entry in FIGURES.values():
        lines.append(f"  {entry.name}  (book/{entry.chapter}.md)")
        lines.extend(textwrap.wrap(entry.description, width, initial_indent="      ", subsequent_indent="      "))
    return "\n".join(lines)


def resolve_names(only: Iterable[str] | None) -> list[str]:
    """The figures to write, in registry order: all of them, or those named in ``only`` (names may
    also be given comma-separated). Raises ``ValueError`` naming an unknown name and the valid names."""
    if only is None:
        return list(FIGURES)
    if isinstance(only, str):
        only = [only]
    wanted = [name.strip() for item in only for name in str(item).split(",") if name.strip()]
    if not wanted:
        raise ValueError(f"only must name at least one figure; valid names: {', '.join(FIGURES)}")
    unknown = [name for name in wanted if name not in FIGURES]
    if unknown:
        raise ValueError(f"unknown figure name(s) {', '.join(map(repr, unknown))}; valid names: {', '.join(FIGURES)}")
    return [name for name in FIGURES if name in wanted]


def check_scale(scale: str) -> str:
    """Return ``scale`` if it is one of :data:`SCALES`, else raise ``ValueError`` naming it."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    return scale


def render(
    names: Sequence[str] | None, out: str | Path, scale: str = "chapter", *, progress: bool = True
) -> dict[str, tuple[Path, float]]:
    """Compute and write the figures ``names`` (all if ``None``) as ``<out>/<name>.png`` in the book's
    style (:data:`localization.plotting.BOOK_STYLE`), with a progress bar (tqdm, on stderr) unless
    ``progress`` is false; one line per file written (path, seconds, scale) on stdout.

    Returns
    -------
    dict name → (path written, seconds taken).
    """
    import matplotlib as mpl
    from tqdm import tqdm

    from localization import plotting

    names = resolve_names(names)
    scale = check_scale(scale)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    with mpl.rc_context(plotting.BOOK_STYLE), tqdm(names, unit="figure", disable=not progress) as bar:
        for name in bar:
            bar.set_postfix_str(name)
            start = time.perf_counter()
            built = FIGURES[name].build(scale)
            if not isinstance(built, Built):
                raise TypeError(f"the builder of figure {name!r} must return a Built, got {type(built).__name__}")
            path = out / f"{name}.png"
            built.figure.savefig(path)
            written[name] = (path, time.perf_counter() - start)
            bar.write(f"{path} ({written[name][1]:.1f} s, scale {scale})", file=sys.stdout)
    return written


def new_figure(figsize: tuple[float, float], **kwargs: Any) -> Any:
    """A Matplotlib Figure outside pyplot (nothing global is created or kept)."""
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, **kwargs)


# -------------------------------------------------------------------------------------------------
# the figures, in book order
# -------------------------------------------------------------------------------------------------
@register("intro_phenomenon", "intro")
def _intro_phenomenon(scale: str) -> Any:
    """The introduction's figure: M2's receptive field during training on NLGP(g = 100) and
    NLGP(g = 0.01) from the same initial weights (ξ = (1, 3), N = 40, lr 0.05, batch 10 000, 2000
    steps: the paper's Fig. 3 settings at both scales).
    """
    import jax.numpy as jnp

    from localization import book, data, models, plotting, train

    check_scale(scale)
    n, xi = 40, (1.0, 3.0)
    lr, batch, steps = 0.05, 10_000, 2000
    checkpoints = jnp.linspace(0, steps, 21).astype(int)
    data_key = book.key("intro", "data")
    w0 = models.init_weights(book.key("intro", "init"), (n,), init_scale=1e-3)
    gains = {"strongly non-Gaussian, $g = 100$": 100.0, "near-Gaussian, $g = 0.01$": 0.01}
    fig = new_figure((6.8, 3.6), layout="constrained")
    for ax, (label, g) in zip(fig.subplots(1, 2), gains.items(), strict=True):
        run = train.train_online(
            data_key,
            data.family_task("NLGP", g, xi=xi),
            w0,
            lr=lr,
            batch=batch,
            steps=steps,
            checkpoints=checkpoints,
            n=n,
        )
        plotting.plot_field_evolution(ax, run)
        ax.set_title(f"NLGP, {label}")
    return Built(fig, None)


@register("fig2_data_models", "data")
def _fig2_data_models(scale: str) -> Any:
    """Paper Fig. 2 redrawn: one sample at the long and the short length-scale, the covariance and the
    marginal of Ising, NLGP(0.01) and Kur(5), N = 100, exact samplers (the same at both scales).
    """
    from localization import book
    from localization.figures.draw import FIG2_MODELS, draw_data_models

    check_scale(scale)
    fig = new_figure((6.8, 9.0), layout="constrained")
    draw_data_models(fig.subplots(4, len(FIG2_MODELS)), book.key("data", "models"))
    return Built(fig, None)


def _six_models(scale: str) -> tuple[dict[str, Any], dict[str, Any]]:
    from localization import data

    labels = {  # label -> (family, parameter) of data.family_task, xi = (1, 3)
        "Ising": ("Ising", 0.7),
        "NLGP(g=100)": ("NLGP", 100.0),
        "NLGP(g=0.01)": ("NLGP", 0.01),
        "Kur(k=10)": ("Kur", 10.0),
        "Kur(k=5)": ("Kur", 5.0),
        "Gaussian clone of NLGP(100)": ("Gaussian clone of NLGP", 100.0),
    }
    settings = dict(lr=0.05, batch=1000, steps=1000, inits=8, checkpoints=41)
    if scale == "paper":
        settings.update(batch=10_000, steps=2000)
    return {label: data.family_task(*spec) for label, spec in labels.items()}, settings


@register("fig3_fields_six_models", "simulation")
def _fig3_fields(scale: str) -> Any:
    """M2's receptive field during training on six tasks from one initialisation, in the style of
    paper Fig. 3 (Ising, NLGP(100), NLGP(0.01), Kur(10), Kur(5), the Gaussian clone of NLGP(100); ξ =
    (1, 3), N = 40, lr 0.05, 8 initialisations). Chapter: batch 1000, 1000 steps; paper: batch 10 000,
    2000 steps (the paper's Fig. 3 code; it used batch 500 for Ising, for its sampler's cost).
    """
    from localization import book
    from localization import experiments as ex
    from localization.figures.draw import draw_field_grid

    tasks, settings = _six_models(check_scale(scale))
    groups = [["NLGP(g=100)", "NLGP(g=0.01)"], ["Kur(k=10)", "Kur(k=5)"], ["Ising"], ["Gaussian clone of NLGP(100)"]]
    runs = ex.grouped_ipr_sweep(book.key("simulation", "evo"), tasks, groups, n=40, keep_weights=True, **settings)
    fig = new_figure((6.8, 8.4), layout="constrained")
    draw_field_grid(fig.subplots(3, 2, sharex=True), runs)
    return Built(fig, None)


@register("fig5_ipr_vs_kurtosis", "simulation")
def _fig5(scale: str) -> Any:
    """Paper Fig. 5: final IPR of M2 against the exact excess kurtosis of NLGP(g) and Kur(k), mean ±
    std over 30 initialisations (ξ = (0.3, 0.7), N = 40, lr 0.1). Chapter: batch 1000, 4000 steps;
    paper: batch 5000, 10 000 steps (experiments.PAPER_FIG5, about 1e9 sample-steps: slow).
    """
    from localization import book
    from localization import experiments as ex
    from localization.figures.draw import draw_ipr_vs_kurtosis

    settings = ex.PAPER_FIG5.replace(batch=1000, steps=4000, checkpoints=41)
    if check_scale(scale) == "paper":
        settings = ex.PAPER_FIG5
    result = ex.fig5(book.key("simulation", "fig5"), settings)
    fig = new_figure((6.8, 4.6), layout="constrained")
    draw_ipr_vs_kurtosis(fig.subplots(), result)
    return Built(fig, None)


@register("phase_diagram", "simulation")
def _phase_diagram(scale: str) -> Any:
    """Beyond the paper: final IPR of M2 over Kur(k) (7 exponents) × length-scale ratio ξ₁/ξ₀ (4
    values, ξ₀ = 0.5), N = 40, lr 0.1. Chapter: 4 initialisations, batch 250, 2000 steps; paper: the
    paper's Fig. 5 training settings (30 initialisations, batch 5000, 10 000 steps).
    """
    from localization import book
    from localization import experiments as ex
    from localization.figures.draw import draw_phase_diagram

    settings = dict(inits=4, batch=250, steps=2000, checkpoints=11)
    if check_scale(scale) == "paper":
        settings = dict(inits=30, batch=5000, steps=10_000, checkpoints=11)
    ks, ratios = (4.5, 5.0, 5.4, 6.1, 7.0, 10.0, 50.0), (1.4, 2.0, 3.0, 5.0)
    pd = ex.phase_diagram(book.key("simulation", "phase"), ks, ratios, xi0=0.5, n=40, **settings)
    fig = new_figure((6.8, 4.4), layout="constrained")
    draw_phase_diagram(fig.subplots(), pd, 40)
    return Built(fig, None)


@register("fig3_amplifier", "amplifier")
def _fig3_amplifier(scale: str) -> Any:
    """The amplifier φ of the paper's Fig. 3 models (Ising J = 0.7, NLGP(0.01), Kur(5) at ξ = 3; the
    paper's Fig. 3, second column) with its cubic Taylor polynomial and the linear reference, and the
    deviation from the line below it, one model above the other (exact quadrature, the same at both
    scales).
    """
    from localization import data, plotting

    check_scale(scale)
    a = np.unique(np.concatenate([np.linspace(0.0025, 0.9975, 200), [0.01, 0.1, 0.8, 0.999, 1 - 1e-10]]))
    models = {
        "Ising(J = 0.7)": data.Ising(0.7),
        "NLGP(g = 0.01)": data.NLGP(3.0, 0.01),
        "Kur(k = 5)": data.Kur(3.0, 5.0),
    }
    fig = new_figure((6.8, 11.0), layout="constrained")
    for sub, (label, model) in zip(fig.subfigures(len(models), 1), models.items(), strict=True):
        top, bottom = sub.subplots(2, 1, sharex=True, height_ratios=[2, 1])
        plotting.plot_amplifier(top, bottom, model.marginal, a, name=label)
    return Built(fig, None)


def _mechanism_setup() -> dict[str, Any]:
    """The mechanism chapter's tasks (Gaussian, NLGP(3), Kur(5) at ξ = (1, 3), N = 40), their
    covariances, exact amplifiers and tabulated amplifiers (for flow integrations)."""
    from localization import data, theory

    n, xi = 40, (1.0, 3.0)
    tasks = {
        "Gaussian": data.LengthscaleTask.of(data.Gaussian, xi=xi),
        "NLGP(3)": data.LengthscaleTask.of(data.NLGP, xi=xi, gain=3.0),
        "Kur(5)": data.LengthscaleTask.of(data.Kur, xi=xi, k=5.0),
    }
    phi = {name: theory.amplifier(task.model1.marginal) for name, task in tasks.items()}
    return dict(
        n=n,
        tasks=tasks,
        cov={name: task.covariances(n) for name, task in tasks.items()},
        phi=phi,
        fast={name: theory.tabulate_amplifier(p) for name, p in phi.items()},
        colors={"Gaussian": "0.35", "NLGP(3)": "C3", "Kur(5)": "C0"},
    )


def _mechanism_flows(setup: dict[str, Any], steps: Sequence[int]) -> dict[str, Any]:
    """The mechanism chapter's flows from its first random start (key ("mechanism", "w0")): forward
    Euler, step 0.05, the linear φ for the Gaussian task, checkpoints every 20 steps."""
    import jax

    from localization import book, theory
    from localization.theory import mechanism as mech

    n = setup["n"]
    w0 = np.asarray(jax.random.normal(book.key("mechanism", "w0"), (8, n), dtype=np.float64))
    flows = {}
    for name in setup["tasks"]:
        phi = (lambda a: mech.GAUSSIAN_SLOPE * a) if name == "Gaussian" else setup["fast"][name]
        flows[name] = theory.integrate_effective(
            w0[0], phi, *setup["cov"][name], lr=0.05, steps=steps[-1], checkpoints=np.arange(0, steps[-1] + 1, 20)
        )
    return flows


@register("mechanism_gain", "mechanism")
def _mechanism_gain(scale: str) -> Any:
    """The mechanism chapter's effective gain φ(a)/a of Gaussian, NLGP(3) and Kur(5) data (ξ = (1,
    3), N = 40), in units of √(2/π), with the argument of each task's constant state (exact
    quadrature, the same at both scales).
    """
    from localization.figures.mechanism import draw_gain
    from localization.theory import mechanism as mech

    check_scale(scale)
    setup = _mechanism_setup()
    grid = np.linspace(1e-3, 1.0, 400)
    gains = {name: mech.effective_gain(phi, grid) for name, phi in setup["phi"].items()}
    alphas = {name: mech.constant_mode_stability(setup["phi"][name], *setup["cov"][name]).alpha for name in gains}
    fig = new_figure((6.8, 3.6), layout="constrained")
    draw_gain(fig.subplots(), grid, gains, alphas, colors=setup["colors"])
    return Built(fig, None)


@register("mechanism_flow", "mechanism")
def _mechanism_flow(scale: str) -> Any:
    """The mechanism chapter's flow at work: weights and their local average Σ₁w/s at t = 0, 5, 10,
    20, 200 under the linear, NLGP(3) and Kur(5) flows from one random start (book key
    ("mechanism", "w0"); forward Euler, step 0.05; the same at both scales).
    """
    from localization.figures.mechanism import draw_flow_snapshots

    check_scale(scale)
    setup = _mechanism_setup()
    steps = [int(round(t / 0.05)) for t in (0.0, 5.0, 10.0, 20.0, 200.0)]
    flows = _mechanism_flows(setup, steps)
    fig = new_figure((6.8, 6.6), layout="constrained")
    axes = fig.subplots(3, len(steps), sharex=True, sharey="row")
    sigma1 = {name: cov[1] for name, cov in setup["cov"].items()}
    draw_flow_snapshots(axes, flows, sigma1, steps, colors=setup["colors"])
    fig.suptitle("The flow at work: weights and their local average, same start")
    return Built(fig, None)


@register("mechanism_ipr", "mechanism")
def _mechanism_ipr(scale: str) -> Any:
    """The mechanism chapter's IPR along the three flows of ``mechanism_flow`` and the two parts of
    its rate (linear flow, gain ≠ √(2/π)) for NLGP(3) and Kur(5) (the same at both scales).
    """
    from localization.figures.mechanism import draw_ipr_split
    from localization.theory import mechanism as mech

    check_scale(scale)
    setup = _mechanism_setup()
    flows = _mechanism_flows(setup, [0, 4000])
    splits = {
        name: mech.ipr_rate_split(np.asarray(flows[name].weights), setup["phi"][name], *setup["cov"][name])
        for name in ("NLGP(3)", "Kur(5)")
    }
    fig = new_figure((6.8, 7.0), layout="constrained")
    draw_ipr_split(fig.subplots(2, 1), flows, splits, setup["n"], colors=setup["colors"], tmax=100)
    return Built(fig, None)


@register("fig3_sgd_vs_flow", "effective_dynamics")
def _fig3_sgd_vs_flow(scale: str) -> Any:
    """Paper Fig. 3: SGD, the effective flow with the exact φ and with the Taylor φ, from the same
    initial weights, on Ising J = (0.3, 0.7), NLGP(0.01) and Kur(5) (ξ = (1, 3), N = 40, lr 0.05, 2000
    steps; the first of the chapter's 30 initialisations). Chapter: batch 2000 for Ising, 1000
    otherwise; paper: 500 for Ising, 10 000 otherwise.
    """
    from localization import book, data, models
    from localization.experiments import comparison as cmp
    from localization.figures.draw import draw_sgd_vs_flow

    check_scale(scale)
    ch, xi, n = "effective_dynamics", (1.0, 3.0), 40
    tasks = {
        "Ising": data.LengthscaleTask(data.Ising(0.3), data.Ising(0.7)),
        "NLGP(0.01)": data.LengthscaleTask.of(data.NLGP, xi=xi, gain=0.01),
        "Kur(5)": data.LengthscaleTask.of(data.Kur, xi=xi, k=5.0),
    }
    batch = {"Ising": 2000, "other": 1000} if scale == "chapter" else {"Ising": 500, "other": 10_000}
    w30 = models.init_weights(book.key(ch, "peaks-w0"), n, init_scale=1e-3, num=30)
    common = dict(lr=0.05, steps=2000, checkpoints=41, balanced=True)
    runs = {
        "Ising": cmp.compare_flow_and_sgd(
            book.key(ch, "peaks-ising"), tasks["Ising"], w30, batch=batch["Ising"], **common
        )
    }
    for j, name in enumerate(["NLGP(0.01)", "Kur(5)"]):
        runs[name] = cmp.compare_flow_and_sgd(
            book.key(ch, "modes-sgd", j), tasks[name], w30, batch=batch["other"], **common
        )

    def first_init(c):
        return c._replace(
            **{
                k: getattr(c, k)._replace(weights=np.asarray(getattr(c, k).weights[0]))
                for k in ("sgd", "flow", "taylor")
            }
        )

    fig = new_figure((6.8, 7.6), layout="constrained")
    axes = fig.subplots(3, 3, sharex=True, sharey="row")
    draw_sgd_vs_flow(axes, {name: first_init(c) for name, c in runs.items()})
    return Built(fig, None)


@register("fig8_breakdown", "effective_dynamics")
def _fig8_breakdown(scale: str) -> Any:
    """Paper Fig. 8: where the exact-φ flow and SGD part, on NLGP(g = 100) (4 initialisations) and
    NLGP(g = 0.01) with ξ = (0.3, 0.7): IPR, shape distance (with the SGD-vs-SGD noise level),
    Lindeberg ratio, and unit-norm fields around the break-down. Chapter: N = 40, batch 8000, lr
    0.05, 1200 steps; paper: N = 100, batch 50 000, lr 0.01, 6000 steps (the same horizon t = 60).
    """
    import math

    from localization import book, data, metrics, models, train
    from localization.experiments import comparison as cmp
    from localization.figures.draw import draw_breakdown, draw_breakdown_snapshots
    from localization.theory import assumptions

    ch = "effective_dynamics"
    n, batch, f8 = 40, 8000, dict(lr=0.05, steps=1200, checkpoints=121)
    if check_scale(scale) == "paper":
        n, batch, f8 = 100, 50_000, dict(lr=0.01, steps=6000, checkpoints=121)
    tasks = [data.family_task("NLGP", g, xi=(0.3, 0.7)) for g in (100.0, 0.01)]
    w8 = models.init_weights(book.key(ch, "fig8-w0"), n, init_scale=1e-3, num=4)
    sgd8 = train.train_sweep(book.key(ch, "fig8-sgd"), tasks, w8, batch=batch, balanced=True, **f8)
    replica8 = train.train_online(book.key(ch, "fig8-replica"), tasks[1], w8, batch=batch, balanced=True, **f8)
    flow8 = cmp.flow_sweep(tasks, w8, **f8)
    t8 = np.asarray(sgd8.times)
    ipr8 = {"sgd": np.asarray(metrics.ipr(sgd8.weights)), "flow": np.asarray(metrics.ipr(flow8.weights))}
    dist8 = metrics.normalized_distance(sgd8.weights, flow8.weights)
    dist_replica = metrics.normalized_distance(sgd8.weights[1], replica8.weights)
    sigma1 = [task.covariances(n)[1] for task in tasks]
    a3_8 = {
        k: np.stack([np.asarray(assumptions.lindeberg_ratio(run.weights[p], sigma1[p])) for p in range(len(tasks))])
        for k, run in (("sgd", sgd8), ("flow", flow8))
    }
    level = 3 * float(np.median(dist_replica)) / math.sqrt(2)
    t_break = metrics.first_crossing(t8, dist8[0], level)
    fig = new_figure((6.8, 15.5), layout="constrained")
    top, bottom = fig.subfigures(2, 1, height_ratios=[10.5, 5.0])
    draw_breakdown(top.subplots(5, 3, sharex=True), t8, ipr8, dist8, dist_replica, a3_8, t_break, level)
    snapshots = bottom.subplots(2, 2, sharex=True, sharey=True)
    draw_breakdown_snapshots(snapshots, t8, sgd8, flow8, float(t_break[0]))
    return Built(fig, None)
