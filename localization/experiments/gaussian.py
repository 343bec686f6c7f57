r"""The Gaussian chapter's computations (``book/gaussian.md``): SGD on a Gaussian task against the flow.

* :func:`clone_sgd` — online SGD on the Gaussian clone of NLGP(:data:`CLONE_GAIN`) from
  :data:`CLONE_STARTS` initialisations, the exact flow (the chapter's Eq. gauss-flow) from the same
  weights, the share of :math:`\|w\|^2` per frequency along both, and the flow's constant fixed point
  (a :class:`CloneRun`; the figure ``figures.gaussian.gaussian_clone_sgd``); its settings are the
  module constants;
* :func:`clone_sgd_statistics` — that run reduced to the numbers the chapter claims;
* :func:`flow_jax`, :func:`fourier_jacobian`, :func:`proposition_jacobian` — the chapter's proposition
  on the fixed points' stability: the autodiff Jacobian of the flow in the Fourier basis against the
  rates the proposition states;
* :func:`mode_summary` — the fixed points of the flow, the stable one's rates and the dominant frequency
  of an SGD field (the chapter's explorer, ``figures.gaussian.draw_mode_explorer``).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from localization import data, field_analysis, initialisation, train
from localization.theory import gaussian as gf
from localization.theory import mechanism as mech

__all__ = [
    "CLONE_N",
    "CLONE_XI",
    "CLONE_GAIN",
    "CLONE_STARTS",
    "CLONE_SGD",
    "CloneRun",
    "clone_sgd",
    "clone_sgd_statistics",
    "flow_jax",
    "fourier_jacobian",
    "proposition_jacobian",
    "ModeSummary",
    "mode_summary",
]

#: Ring size and length-scales ξ = (ξ₀, ξ₁) of the Gaussian chapter.
CLONE_N, CLONE_XI = 40, (1.0, 3.0)
#: The NLGP gain whose Gaussian clone is trained (excess kurtosis below 1e-3: the Gaussian task).
CLONE_GAIN = 0.01
#: Number of initialisations (Xavier normal, variance × 1e-3).
CLONE_STARTS = 32
#: Online SGD: learning rate, batch (balanced), steps and checkpoints (every 12.5 time units).
CLONE_SGD = dict(lr=0.05, batch=1000, steps=8000, checkpoints=list(range(0, 8001, 250)))


class CloneRun(NamedTuple):
    r"""What :func:`clone_sgd` computes.

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


def clone_sgd(key: jax.Array, init_key: jax.Array) -> CloneRun:
    """Train M2 by online SGD on the Gaussian clone of NLGP and integrate the exact flow from the same weights.

    :data:`CLONE_STARTS` initialisations (``init_weights(init_key, N, init_scale=1e-3)``) trained by
    online SGD (:data:`CLONE_SGD`: learning rate 0.05, batch 1000 balanced, to t = 400) at N =
    :data:`CLONE_N`, ξ = :data:`CLONE_XI`; the flow of Eq. (gauss-flow) integrated from the same
    weights at the same checkpoints.

    Parameters
    ----------
    key : jax.Array
        The PRNG key of the SGD data stream.
    init_key : jax.Array
        The PRNG key of the initial weights.

    Returns
    -------
    CloneRun
        The task, its covariances, the runs, their frequency shares and the constant fixed point.
    """
    task = data.family_task("Gaussian clone of NLGP", CLONE_GAIN, xi=CLONE_XI)
    c0, c1 = (np.asarray(s, dtype=np.float64) for s in task.covariances(CLONE_N))
    w0 = initialisation.init_weights(init_key, CLONE_N, init_scale=1e-3, num=CLONE_STARTS)
    sgd = train.train_online(key, task, w0, balanced=True, **CLONE_SGD)
    flow = gf.integrate(w0, c0, c1, lr=CLONE_SGD["lr"], steps=CLONE_SGD["steps"], checkpoints=CLONE_SGD["checkpoints"])
    shares_sgd = field_analysis.frequency_power(np.asarray(sgd.weights, dtype=np.float64))
    shares_flow = field_analysis.frequency_power(np.asarray(flow.weights))
    point = gf.fixed_points(c0, c1)[0]
    return CloneRun(task, (c0, c1), w0, sgd, flow, shares_sgd, shares_flow, point)


def clone_sgd_statistics(run: CloneRun, late_step: int = 4000) -> dict[str, Any]:
    r"""Reduce the SGD run of :func:`clone_sgd` to the statistics the chapter checks.

    Over the checkpoints from ``late_step`` on (t = 200 to 400 by default), in the Fourier basis
    :math:`Q` of the clone's covariances, with :math:`s = \sqrt{w^\top\Sigma_1 w}` and its value
    :math:`s^* = c/(1 + r(0))` at the constant fixed point (:math:`c = \sqrt{2/\pi}`).

    Parameters
    ----------
    run : CloneRun
        The result of :func:`clone_sgd`.
    late_step : int
        The first step of the late window; one of :data:`CLONE_SGD` ``["checkpoints"]``.

    Returns
    -------
    dict
        ``s_star``; per field (32,): ``share_end`` (the constant's share of :math:`\|w\|^2` at the
        end), ``amp_avg`` (time-averaged :math:`|u_0|`), ``amp_dev`` (``amp_avg`` relative to the
        fixed point's amplitude, minus 1), ``s_dev`` (time-averaged :math:`s` over :math:`s^*`, minus
        1), ``amp_end`` (:math:`|u_0|` at the end); ``held_freq`` (frequency > 0 → the mean part of
        :math:`s^2` held there), ``held_frac`` (their sum over :math:`s^{*2}`), ``k1_lead`` (the
        frequency-1 part over the largest other), ``flow_dev`` (largest relative deviation of the
        flow's :math:`|u_0|` from the amplitude at the end), ``late_relax`` (the window's length in
        relaxation times :math:`1/|\gamma_1|`).
    """
    checkpoints = list(CLONE_SGD["checkpoints"])
    if late_step not in checkpoints:
        raise ValueError(f"late_step must be one of the checkpoints (multiples of 250 up to 8000), got {late_step}")
    c0, c1 = run.cov
    spec = mech.circulant_spectra(c0, c1)
    s_star = math.sqrt(2 / math.pi) / (1 + spec.lam0[0] / spec.lam1[0])
    w_sgd = np.asarray(run.sgd.weights, dtype=np.float64)
    w_flow = np.asarray(run.flow.weights)
    amplitude = run.fixed_point.amplitude
    late = checkpoints.index(late_step)
    u_late = w_sgd[:, late:] @ spec.basis  # (starts, checkpoints, N) Fourier coordinates
    amp_avg = np.abs(u_late[..., 0]).mean(1)
    held = u_late**2 * spec.lam1  # each column's part of s^2
    held_freq = {int(f): float(held[..., spec.freq == f].sum(-1).mean()) for f in np.unique(spec.freq) if f}
    r = spec.lam0 / spec.lam1
    window = (CLONE_SGD["steps"] - late_step) * CLONE_SGD["lr"]
    return dict(
        s_star=s_star,
        share_end=run.shares_sgd[:, -1, 0],
        amp_avg=amp_avg,
        amp_dev=amp_avg / amplitude - 1,
        s_dev=np.sqrt(np.sum(u_late**2 * spec.lam1, -1)).mean(1) / s_star - 1,
        held_freq=held_freq,
        held_frac=sum(held_freq.values()) / s_star**2,
        k1_lead=held_freq[1] / max(val for f, val in held_freq.items() if f != 1),
        flow_dev=np.max(np.abs(np.abs(w_flow[:, -1] @ spec.basis[:, 0]) / amplitude - 1)),
        amp_end=np.abs(w_sgd[:, -1] @ spec.basis[:, 0]),
        late_relax=window * 0.5 * spec.lam1[1] * (r[1] - r[0]),
    )


def flow_jax(w: Any, cov0: Any, cov1: Any) -> Any:
    r"""Return the exact Gaussian flow (the chapter's Eq. gauss-flow), traceable by JAX (for Jacobians).

    :math:`\tfrac12[c\,\Sigma_1w/\sqrt{w^\top\Sigma_1w} - (\Sigma_0+\Sigma_1)w]`, :math:`c=\sqrt{2/\pi}`;
    ``w`` (N,), ``cov0``, ``cov1`` (N, N). :func:`localization.theory.gaussian.flow` validates its
    arguments and is not traceable.
    """
    c = math.sqrt(2 / math.pi)
    s = jnp.sqrt(w @ cov1 @ w)
    return 0.5 * c * (cov1 @ w) / s - 0.5 * (cov0 + cov1) @ w


def fourier_jacobian(w: Any, cov0: Any, cov1: Any, basis: Any) -> np.ndarray:
    r"""Return the autodiff Jacobian of :func:`flow_jax` at ``w`` in the basis ``Q``: :math:`Q^\top JQ`.

    Parameters
    ----------
    w : array_like
        (N,) weights with :math:`w^\top\Sigma_1w > 0`.
    cov0, cov1 : array_like
        (N, N) class covariances.
    basis : array_like
        (N, N) orthonormal basis ``Q`` (columns).

    Returns
    -------
    np.ndarray
        (N, N) float64.
    """
    w = jnp.asarray(w)
    if w.ndim != 1 or np.shape(basis) != (w.shape[0], w.shape[0]):
        raise ValueError(f"w must be (N,) and basis (N, N), got {w.shape} and {np.shape(basis)}")
    jac = np.asarray(jax.jacfwd(lambda x: flow_jax(x, cov0, cov1))(w))
    q = np.asarray(basis)
    return q.T @ jac @ q


def proposition_jacobian(lam0: Any, lam1: Any, columns: tuple[int, ...], phase: float = 0.0) -> np.ndarray:
    r"""Return the Jacobian the chapter's proposition predicts at a fixed point, in the Fourier basis.

    Diagonal with the rates of :func:`localization.theory.mechanism.linear_mode_rates` (the
    amplitude's :math:`-\tfrac12(\lambda_0+\lambda_1)` on the fixed point's column, 0 on its
    partner, :math:`\gamma_k` elsewhere); for a cosine/sine pair at ``phase`` θ the amplitude and
    phase directions are rotated by θ in the pair's plane.

    Parameters
    ----------
    lam0, lam1 : array_like
        (N,) eigenvalues per basis column.
    columns : tuple of int
        The fixed point's column, or its pair of columns.
    phase : float
        The phase θ of a pair's fixed point (ignored for a single column).

    Returns
    -------
    np.ndarray
        (N, N) float64.
    """
    if len(columns) not in (1, 2):
        raise ValueError(f"columns must hold one column or a pair, got {columns}")
    rates = mech.linear_mode_rates(lam0, lam1, columns[0])
    expected = np.diag(rates)
    if len(columns) == 2:
        a, b = columns
        rot = np.array([[math.cos(phase), -math.sin(phase)], [math.sin(phase), math.cos(phase)]])
        expected[np.ix_([a, b], [a, b])] = rot @ np.diag([rates[a], 0.0]) @ rot.T
    return expected


class ModeSummary(NamedTuple):
    r"""What :func:`mode_summary` computes.

    Attributes
    ----------
    points : list of localization.theory.gaussian.FixedPoint
        The flow's single-frequency fixed points, by frequency.
    stable : localization.theory.gaussian.FixedPoint
        The stable one.
    freqs, rates : numpy.ndarray
        The frequency and the rate :math:`\gamma_k` of every basis column but the stable point's own,
        (N - len(stable.columns),).
    dominant : int
        The frequency holding the largest share of the field's :math:`\|w\|^2`
        (:func:`localization.field_analysis.dominant_frequency`).
    dominant_share : float
        That share (:func:`localization.field_analysis.frequency_power`).
    """

    points: list[Any]
    stable: Any
    freqs: np.ndarray
    rates: np.ndarray
    dominant: int
    dominant_share: float


def mode_summary(cov0: Any, cov1: Any, field: Any) -> ModeSummary:
    r"""Return the flow's fixed points, the stable one's rates and the dominant frequency of ``field``.

    Parameters
    ----------
    cov0, cov1 : array_like
        (N, N) circulant class covariances.
    field : array_like
        (N,) weights (e.g. the last checkpoint of an SGD run).

    Returns
    -------
    ModeSummary
        The fixed points (:func:`localization.theory.gaussian.fixed_points`), the stable one, the
        other columns' frequencies and rates at it, and the field's dominant frequency and its share.
    """
    field = np.asarray(field, dtype=np.float64)
    if field.ndim != 1 or field.shape[0] != np.shape(cov0)[0]:
        raise ValueError(f"field must be (N,) with N = {np.shape(cov0)[0]}, got {field.shape}")
    points = sorted(gf.fixed_points(cov0, cov1), key=lambda p: p.freq)
    stable = [p for p in points if p.stable][0]
    rates = np.delete(stable.rates, stable.columns)
    freqs = np.delete(mech.circulant_spectra(cov0, cov1).freq, stable.columns)
    k = int(field_analysis.dominant_frequency(field))
    return ModeSummary(points, stable, freqs, rates, k, float(field_analysis.frequency_power(field)[k]))
