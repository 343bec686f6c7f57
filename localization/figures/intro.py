r"""The figure of the introduction (``book/intro.md``): the phenomenon in one figure.

* :func:`intro_phenomenon` — the registered builder (``python -m localization figures``), which the
  chapter calls: M2 trained by online SGD on NLGP(100) and NLGP(0.01) from the same initial weights
  (:func:`localization.experiments.intro.phenomenon`), drawn by :func:`draw_phenomenon`;
* :func:`explore_gain` — the chapter's explorer of the field learned at every gain of
  :data:`GAIN_STOPS` (:func:`localization.experiments.intro.gain_sweep`).

The runs' settings are the constants of :mod:`localization.experiments.intro`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from localization import book, metrics, plotting
from localization.experiments import intro as experiment
from localization.figures.registry import Built, check_scale, new_figure, register
from localization.trajectory import Trajectory

__all__ = ["GAINS", "intro_phenomenon", "draw_phenomenon", "GAIN_STOPS", "explore_gain"]

#: Panel title → NLGP gain g.
GAINS = {"strongly non-Gaussian, $g = 100$": 100.0, "near-Gaussian, $g = 0.01$": 0.01}


@register("intro_phenomenon", "intro")
def intro_phenomenon(scale: str = "chapter") -> Built:
    """Build the introduction's figure: M2's receptive field during training on NLGP(100) and NLGP(0.01).

    Both runs start from the same initial weights and see the same data stream (ξ = (1, 3), N = 40,
    lr 0.05, batch 10 000, 2000 steps: the paper's Fig. 3 settings at both scales).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        Both scales use the settings above.

    Returns
    -------
    Built
        The figure and a :class:`localization.experiments.intro.Phenomenon` (book keys
        ``("intro", "data")`` for the data stream, ``("intro", "init")`` for the initial weights).
    """
    check_scale(scale)
    result = experiment.phenomenon(book.key("intro", "data"), book.key("intro", "init"), GAINS)
    # the landing page's first screen: short enough to leave room for the text around it
    fig = new_figure((plotting.COLUMN_WIDTH, 2.9), layout="constrained")
    draw_phenomenon(fig, result.runs)
    return Built(fig, result)


def draw_phenomenon(fig: Any, runs: Mapping[str, Trajectory]) -> Any:
    """Draw each run's field along training in a panel of its own, titled with its name.

    One time scale for all panels (the runs share their checkpoints), in a colour bar right of them
    (a colour bar beside each panel crowded the right panel's axis label).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        An empty figure.
    runs : mapping of str to Trajectory
        Panel title → the run (weights (C, N), times (C,)), the same checkpoints for all.

    Returns
    -------
    numpy.ndarray of Axes
        The panels, one per run.
    """
    if not isinstance(runs, Mapping) or not runs:
        raise ValueError(f"runs must be a non-empty mapping of panel title to run, got {runs!r}")
    axes = fig.subplots(1, len(runs), squeeze=False)[0]
    for ax, (label, run) in zip(axes, runs.items(), strict=True):
        plotting.plot_field_evolution(ax, run, colorbar=False)
        ax.set_title(label)
    plotting.time_colorbar(axes, runs[next(iter(runs))].times, location="right", aspect=25, pad=0.02)
    return axes


#: The explorer's gain stops (:func:`explore_gain`).
GAIN_STOPS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)


def explore_gain(data_key, w0, *, batch: int = 2000, steps: int = 1000, checkpoints: int = 11):
    """Show the explorer of the field learned on NLGP(g) at every gain of :data:`GAIN_STOPS`.

    The runs are :func:`localization.experiments.intro.gain_sweep` (the same data stream and start for
    all gains), computed when first shown.

    Parameters
    ----------
    data_key : jax PRNG key
        The data stream's key (that of :func:`intro_phenomenon`).
    w0 : array (N,)
        The initial weights.
    batch, steps, checkpoints : int
        The runs' settings (shorter than the figure's).

    Returns
    -------
    What ``explorer.explore`` returns.
    """
    import functools

    import matplotlib.pyplot as plt

    from localization.book import explorer

    settings = experiment.GainSweepSettings(batch=batch, steps=steps, checkpoints=checkpoints)
    if getattr(w0, "shape", None) != (experiment.N,):
        raise ValueError(f"w0 must have shape ({experiment.N},), got {getattr(w0, 'shape', None)}")

    @functools.cache
    def runs_at_every_gain():
        return experiment.gain_sweep(data_key, w0, GAIN_STOPS, settings)

    def field_figure(gain=100.0):
        runs = runs_at_every_gain()
        weights = runs.weights[GAIN_STOPS.index(gain)]
        fig, ax = plt.subplots(figsize=(plotting.COLUMN_WIDTH, 0.45 * plotting.COLUMN_WIDTH))
        plotting.plot_field_evolution(ax, weights, runs.times)
        ax.set_title(f"NLGP(g = {gain:g}): final IPR {float(metrics.ipr(weights[-1])):.2f}")
        return fig

    return explorer.explore(
        field_figure,
        alt=(
            "The neuron's weights against input position, one curve per checkpoint of training, from "
            "light green (early) to dark purple (late); the title gives the gain and the final IPR."
        ),
        gain=explorer.Slider(GAIN_STOPS, value=100.0, description="gain g"),
    )
