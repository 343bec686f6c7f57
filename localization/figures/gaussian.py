r"""The Gaussian chapter's figure (``book/gaussian.md``).

SGD on the Gaussian clone of NLGP against the exact flow's constant fixed point
(:func:`gaussian_clone_sgd`, drawn by :func:`localization.figures.flows.draw_mode_shares`); its
settings are the module constants.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from localization import plotting
from localization.figures.flows import draw_mode_shares
from localization.figures.registry import Built, check_scale, new_figure, register

__all__ = ["CLONE_N", "CLONE_XI", "CLONE_GAIN", "CLONE_STARTS", "CLONE_SGD", "CloneRun", "gaussian_clone_sgd"]

#: Ring size and length-scales ξ = (ξ₀, ξ₁) of the Gaussian chapter.
CLONE_N, CLONE_XI = 40, (1.0, 3.0)
#: The NLGP gain whose Gaussian clone is trained (excess kurtosis below 1e-3: the Gaussian task).
CLONE_GAIN = 0.01
#: Number of initialisations (Xavier normal, variance × 1e-3).
CLONE_STARTS = 32
#: Online SGD: learning rate, batch (balanced), steps and checkpoints (every 12.5 time units).
CLONE_SGD = dict(lr=0.05, batch=1000, steps=8000, checkpoints=list(range(0, 8001, 250)))


class CloneRun(NamedTuple):
    r"""What ``gaussian_clone_sgd`` computes.

    Attributes
    ----------
    task : localization.data.LengthscaleTask
        The Gaussian clone of NLGP(:data:`CLONE_GAIN`) at ξ = :data:`CLONE_XI`.
    cov : tuple of numpy.ndarray
        Its class covariances ``(cov0, cov1)``, each (N, N), float64.
    w0 : jax.Array
        The initial weights, (:data:`CLONE_STARTS`, N).
    sgd : localization.train.TrainResult
        Online SGD from ``w0`` (:data:`CLONE_SGD`).
    flow : localization.trajectory.Trajectory
        The exact Gaussian flow from ``w0`` at the same checkpoints.
    shares_sgd, shares_flow : numpy.ndarray
        Share of :math:`\|w\|^2` per frequency along SGD and along the flow, (starts, C, N//2 + 1).
    fixed_point : localization.theory.gaussian.FixedPoint
        The flow's constant fixed point (its stable one for ξ₀ < ξ₁).
    """

    task: Any
    cov: tuple[np.ndarray, np.ndarray]
    w0: Any
    sgd: Any
    flow: Any
    shares_sgd: np.ndarray
    shares_flow: np.ndarray
    fixed_point: Any


@register("gaussian_clone_sgd", "gaussian")
def gaussian_clone_sgd(scale: str = "chapter") -> Built:
    """Draw SGD on the Gaussian clone of NLGP against the exact flow's constant fixed point.

    32 initialisations trained by online SGD (learning rate 0.05, batch 1000 balanced, to t = 400)
    at N = 40, ξ = (1, 3), book keys ("gaussian", "sgd-w0") and ("gaussian", "sgd"); the flow of
    Eq. (gauss-flow) integrated from the same weights (the same at both scales).

    Parameters
    ----------
    scale : {"chapter", "paper"}
        The same figure at both scales.

    Returns
    -------
    Built
        The figure and the :class:`CloneRun` (the chapter's checks read the runs and the flow).
    """
    from localization import book, data, field_analysis, initialisation, train
    from localization.theory import gaussian as gf

    check_scale(scale)
    task = data.family_task("Gaussian clone of NLGP", CLONE_GAIN, xi=CLONE_XI)
    c0, c1 = (np.asarray(s, dtype=np.float64) for s in task.covariances(CLONE_N))
    w0 = initialisation.init_weights(book.key("gaussian", "sgd-w0"), CLONE_N, init_scale=1e-3, num=CLONE_STARTS)
    sgd = train.train_online(book.key("gaussian", "sgd"), task, w0, balanced=True, **CLONE_SGD)
    flow = gf.integrate(w0, c0, c1, lr=CLONE_SGD["lr"], steps=CLONE_SGD["steps"], checkpoints=CLONE_SGD["checkpoints"])
    w_sgd = np.asarray(sgd.weights, dtype=np.float64)
    shares_sgd = field_analysis.frequency_power(w_sgd)
    shares_flow = field_analysis.frequency_power(np.asarray(flow.weights))
    point = gf.fixed_points(c0, c1)[0]
    fig = new_figure((plotting.COLUMN_WIDTH, 3.0), layout="constrained")
    draw_mode_shares(fig.subplots(1, 2), np.asarray(sgd.times), shares_sgd, w_sgd[:, -1], point.amplitude)
    return Built(fig, CloneRun(task, (c0, c1), w0, sgd, flow, shares_sgd, shares_flow, point))
