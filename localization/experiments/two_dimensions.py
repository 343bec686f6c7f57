r"""The two-dimensions chapter's runs (``book/two_dimensions.md``: paper Fig. 1 right, committee panel).

:func:`fig1_committee_runs` trains the soft committee machine of paper Fig. 1 (right) on a torus
(:func:`localization.experiments.many_neurons.fig1_populations` at the chapter's scale, with the
near-Gaussian control; :func:`localization.experiments.many_neurons.train_population` with
:data:`localization.experiments.many_neurons.FIG1_GRID` at the paper's) and measures the box share of
every field along training: the share of the book's definition of a localized field,
:func:`localization.field_analysis.localization_share` (a box holding a quarter of the sites).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import numpy as np

from localization import field_analysis
from localization.experiments import many_neurons as mn

__all__ = ["Fig1Runs", "fig1_committee_runs"]


class Fig1Runs(NamedTuple):
    """The runs of :func:`fig1_committee_runs`.

    Attributes
    ----------
    runs : dict of str to PopulationRun
        "NLGP(100)" (and, at chapter scale, "NLGP(0.01)", the same network from the same initial
        weights and data stream) → the trained committee machine.
    share : dict of str to numpy.ndarray, each (C, K)
        The box share (:func:`localization.field_analysis.localization_share`: a box holding a quarter of
        the sites; localized above 0.8) of every field of the first network at every checkpoint.
    steps : numpy.ndarray, shape (C,)
        The checkpoints' SGD steps.
    """

    runs: dict[str, mn.PopulationRun]
    share: dict[str, np.ndarray]
    steps: np.ndarray


def fig1_committee_runs(key: jax.Array, *, paper: bool = False) -> Fig1Runs:
    """Train the committee machine of paper Fig. 1 (right) on a torus and measure its fields' box shares.

    ReLU, no bias, K = 20, trained on NLGP(100), ξ = (1, 2). Chapter scale
    (:data:`localization.experiments.many_neurons.FIG1_CHAPTER`): 20 × 20, batch 1000, 5000 steps, 11
    checkpoints, and the NLGP(0.01) control from the same weights on the same data stream; paper scale
    (:data:`localization.experiments.many_neurons.FIG1_GRID`): 30 × 30, batch 10 000, 10 000 steps, the
    NLGP(100) run only (about 12 minutes on two cores).

    Parameters
    ----------
    key : jax.Array
        The PRNG key of the initial weights and the data stream.
    paper : bool
        The paper's settings instead of the chapter's.

    Returns
    -------
    Fig1Runs
        The runs, the box share of every field of the first network at every checkpoint, and the
        checkpoints' steps.
    """
    if not isinstance(paper, bool):
        raise TypeError(f"paper must be a bool, got {paper!r}")
    runs = {"NLGP(100)": mn.train_population(key, mn.FIG1_GRID)} if paper else mn.fig1_populations(key)
    share = {
        name: np.stack([field_analysis.localization_share(f, r.settings.shape) for f in r.fields[0]])
        for name, r in runs.items()
    }
    first = next(iter(runs.values()))
    steps = np.rint(first.times / first.settings.lr).astype(int)
    return Fig1Runs(runs, share, steps)
