r"""The figure of the introduction (``book/intro.md``): the phenomenon in one figure.

* :func:`intro_phenomenon` — the registered builder (``python -m localization figures``), which the
  chapter calls: M2 trained by online SGD on NLGP(100) and NLGP(0.01) from the same initial weights.

The settings are module constants (the chapter quotes them and its widget reuses them).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from localization import book, data, initialisation, metrics, plotting, train
from localization.figures.registry import Built, check_scale, new_figure, register
from localization.trajectory import Trajectory

__all__ = ["N", "XI", "LR", "BATCH", "STEPS", "GAINS", "Phenomenon", "intro_phenomenon", "GAIN_STOPS", "explore_gain"]

#: Input size and length-scales (ξ₀, ξ₁) of the paper's Fig. 3; y = 1 for the longer one.
N, XI = 40, (1.0, 3.0)
#: Learning rate, batch size and number of SGD steps (the paper's Fig. 3 settings).
LR, BATCH, STEPS = 0.05, 10_000, 2000
#: Panel title → NLGP gain g.
GAINS = {"strongly non-Gaussian, $g = 100$": 100.0, "near-Gaussian, $g = 0.01$": 0.01}


class Phenomenon(NamedTuple):
    """The runs of :func:`intro_phenomenon`.

    Attributes
    ----------
    key : jax.Array
        The data stream's key (book key ``("intro", "data")``), shared by both runs.
    w0 : jax.Array, shape (N,)
        The initial weights (book key ``("intro", "init")``, scale 1e-3), shared by both runs.
    runs : dict of str to localization.trajectory.Trajectory
        Panel title (:data:`GAINS`) → the run, 21 checkpoints.
    final_ipr : dict of str to float
        Panel title → the IPR of the final weights.
    """

    key: jax.Array
    w0: jax.Array
    runs: dict[str, Trajectory]
    final_ipr: dict[str, float]


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
        The figure and a :class:`Phenomenon`.
    """
    check_scale(scale)
    checkpoints = jnp.linspace(0, STEPS, 21).astype(int)
    key = book.key("intro", "data")
    w0 = initialisation.init_weights(book.key("intro", "init"), (N,), init_scale=1e-3)
    runs = {
        label: train.train_online(
            key, data.family_task("NLGP", g, xi=XI), w0, lr=LR, batch=BATCH, steps=STEPS, checkpoints=checkpoints, n=N
        )
        for label, g in GAINS.items()
    }
    final_ipr = {label: float(metrics.ipr(run.weights[-1])) for label, run in runs.items()}
    # the landing page's first screen: short enough to leave room for the text around it
    fig = new_figure((plotting.COLUMN_WIDTH, 2.9), layout="constrained")
    axes = fig.subplots(1, 2)
    for ax, (label, run) in zip(axes, runs.items(), strict=True):
        plotting.plot_field_evolution(ax, run, colorbar=False)
        ax.set_title(label)
    # one time scale for both panels (the same checkpoints), right of both: a colour bar beside
    # each panel crowded the right panel's axis label
    plotting.time_colorbar(axes, runs[next(iter(runs))].times, location="right", aspect=25, pad=0.02)
    return Built(fig, Phenomenon(key, w0, runs, final_ipr))


#: The explorer's gain stops (:func:`explore_gain`).
GAIN_STOPS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)


def explore_gain(data_key, w0, *, batch: int = 2000, steps: int = 1000, checkpoints: int = 11):
    """Show the explorer of the field learned on NLGP(g) at every gain of :data:`GAIN_STOPS`.

    One vmapped ``train.train_sweep`` over the stops (the same data stream and start for all
    gains, at :data:`XI`, :data:`LR`, ``N`` = :data:`N`), computed when first shown.

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

    for name, value in (("batch", batch), ("steps", steps), ("checkpoints", checkpoints)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if getattr(w0, "shape", None) != (N,):
        raise ValueError(f"w0 must have shape ({N},), got {getattr(w0, 'shape', None)}")

    @functools.cache
    def runs_at_every_gain():
        tasks = [data.family_task("NLGP", g, xi=XI) for g in GAIN_STOPS]
        return train.train_sweep(data_key, tasks, w0, lr=LR, batch=batch, steps=steps, checkpoints=checkpoints, n=N)

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
