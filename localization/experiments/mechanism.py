r"""The mechanism chapter's computations (``book/mechanism.md``: why a super-linear φ localizes).

The chapter's settings (module constants) and what it and its figures
(:mod:`localization.figures.mechanism`, which draws them) compute:

* :func:`setup` — the chapter's tasks (Gaussian, NLGP(3), Kur(5) at ξ = :data:`XI`, N = :data:`N`),
  their covariances and amplifiers;
* :func:`gain_data` — the effective gain :math:`G(a)=\varphi(a)/a` of the three tasks and the
  stability of their constant states;
* :func:`integrate_flows` — the flows of Eq. (mech-flow) from one random start (explicit ``key``),
  and :func:`ipr_splits` the two parts of the IPR's rate along them, Eq. (mech-ipr);
* :func:`flow_from_starts`, :func:`ipr_split_integrals` — the flow from several starts and the
  integrals of the two parts of the IPR's rate over a run;
* :func:`fourier_jacobian` — the Jacobian of the flow in the Fourier basis (the chapter's checks of
  Eqs. (mech-rates) and (mech-const)).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import numpy as np

from localization import prng, theory
from localization import validation as v
from localization.theory.mechanism import GAUSSIAN_SLOPE
from localization.trajectory import Trajectory

__all__ = [
    "N",
    "XI",
    "FLOW_LR",
    "SNAPSHOT_TIMES",
    "GAIN_GRID",
    "Setup",
    "setup",
    "integrate_flows",
    "fourier_jacobian",
    "StartsFlow",
    "flow_from_starts",
    "ipr_split_integrals",
    "GainData",
    "gain_data",
    "ipr_splits",
]

#: The chapter's ring size and length-scales ξ = (ξ₀, ξ₁).
N, XI = 40, (1.0, 3.0)
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


def _linear(a):
    """Return the Gaussian task's φ(a) (one function for every call: a new lambda is compiled anew)."""
    return GAUSSIAN_SLOPE * a


def integrate_flows(key: jax.Array, setting: Setup, steps: int) -> dict[str, Trajectory]:
    """Integrate the chapter's flows from one random start (the first of 8 drawn with ``key``).

    Forward Euler with step :data:`FLOW_LR` (Eq. (mech-flow)), the linear φ (slope √(2/π)) for the
    Gaussian task and the tabulated φ for the others, checkpoints every 20 steps. The starts are
    ``prng.flat_normal(key, (8, N))`` (the chapter's book key ``("mechanism", "w0")``).

    Parameters
    ----------
    key : jax.Array
        PRNG key of the starts.
    setting : Setup
        The chapter's tasks (:func:`setup`).
    steps : int
        Number of Euler steps, a multiple of 20.

    Returns
    -------
    dict
        Task name → :class:`~localization.trajectory.Trajectory` of one start, weights (C, N).
    """
    key = v.key("key", key)
    if not isinstance(setting, Setup):
        raise TypeError(f"setting must be a Setup (setup()), got {type(setting).__name__}")
    steps = v.integer("steps", steps, 20)
    if steps % 20:
        raise ValueError(f"steps must be a multiple of 20 (the checkpoint spacing), got {steps}")
    w0 = np.asarray(prng.flat_normal(key, (8, setting.n), np.float64))
    flows = {}
    for name in setting.tasks:
        phi = _linear if name == "Gaussian" else setting.fast[name]
        flows[name] = theory.integrate_effective(
            w0[0], phi, *setting.cov[name], lr=FLOW_LR, steps=steps, checkpoints=np.arange(0, steps + 1, 20)
        )
    return flows


def fourier_jacobian(w: Any, phi: Any, cov0: Any, cov1: Any, basis: Any) -> np.ndarray:
    r"""Return the Jacobian of the effective flow (Eq. (mech-flow)) at ``w`` in a basis: :math:`Q^\top JQ`.

    :math:`J` is :func:`localization.theory.effective_jacobian` (forward-mode automatic
    differentiation of :math:`\tfrac12[\varphi(a)-(\Sigma_0+\Sigma_1)w]`, :math:`a=\Sigma_1w/s`) for
    any differentiable φ; in the real Fourier basis of circulant covariances it is diagonal at a
    single-mode fixed point (Eq. (mech-rates)) and at the constant state (Eq. (mech-const)).
    The Gaussian chapter's :func:`localization.experiments.gaussian.fourier_jacobian` is the case
    φ(a) = √(2/π) a.

    Parameters
    ----------
    w : array_like
        (N,) weights with :math:`w^\top\Sigma_1w > 0`.
    phi : PytreeAmplifier or Callable
        The amplifier φ, differentiable in JAX (an exact amplifier, not a tabulated one).
    cov0, cov1 : array_like
        (N, N) class covariances; ``cov1`` with unit diagonal.
    basis : array_like
        (N, N) orthonormal basis ``Q`` (columns), e.g. ``circulant_spectra(...).basis``.

    Returns
    -------
    np.ndarray
        (N, N) float64, entry (k, l) = :math:`Q_{\cdot k}^\top J\,Q_{\cdot l}`.
    """
    q = np.asarray(v.float_array("basis", basis, ndim_min=2), dtype=np.float64)
    n = np.shape(w)[-1] if np.ndim(w) else 0
    if np.ndim(w) != 1 or q.shape != (n, n):
        raise ValueError(f"w must be (N,) and basis (N, N), got shapes {np.shape(w)} and {q.shape}")
    if not np.allclose(q.T @ q, np.eye(n), rtol=0, atol=1e-10):
        raise ValueError("basis must be orthonormal (Q^T Q = I to 1e-10)")
    return q.T @ theory.effective_jacobian(w, phi, cov0, cov1) @ q


class StartsFlow(NamedTuple):
    r"""The effective flow from several starts (see :func:`flow_from_starts`).

    Attributes
    ----------
    times : numpy.ndarray
        (C,) checkpoint times.
    weights : numpy.ndarray
        (S, C, N) weights at the checkpoints.
    ipr : numpy.ndarray
        (S, C) their IPR :math:`\sum_iw_i^4/(\sum_iw_i^2)^2`.
    """

    times: np.ndarray
    weights: np.ndarray
    ipr: np.ndarray


def flow_from_starts(w0: Any, phi: Any, cov0: Any, cov1: Any, t_end: float = 200.0) -> StartsFlow:
    """Integrate Eq. (mech-flow) from each start by forward Euler (step :data:`FLOW_LR`), 201 checkpoints.

    Parameters
    ----------
    w0 : array_like
        (S, N) non-zero starts.
    phi : PytreeAmplifier or Callable
        The amplifier φ (a tabulated one is fastest); pass the same function object to every call
        for one compiled flow.
    cov0, cov1 : array_like
        (N, N) class covariances; ``cov1`` with unit diagonal.
    t_end : float
        Final time > 0, a whole number of steps of :data:`FLOW_LR` (default 200).

    Returns
    -------
    StartsFlow
        Times (201,), weights (S, 201, N) and IPR (S, 201).
    """
    t_end = v.positive("t_end", t_end)
    steps = int(t_end / FLOW_LR)
    if steps < 200 or abs(steps * FLOW_LR - t_end) > 1e-9:
        raise ValueError(f"t_end must be a whole number >= 200 of steps of {FLOW_LR}, got {t_end}")
    tr = theory.integrate_effective(w0, phi, cov0, cov1, lr=FLOW_LR, steps=steps, checkpoints=201)
    weights = np.asarray(tr.weights)
    ipr = np.sum(weights**4, -1) / np.sum(weights**2, -1) ** 2
    return StartsFlow(np.asarray(tr.times), weights, ipr)


def ipr_split_integrals(flow: StartsFlow, phi: Any, cov0: Any, cov1: Any) -> tuple[np.ndarray, np.ndarray]:
    """Integrate the two parts of the IPR's rate, Eq. (mech-ipr), along a flow (trapezoid rule).

    Parameters
    ----------
    flow : StartsFlow
        The flow (:func:`flow_from_starts`).
    phi, cov0, cov1
        As for :func:`localization.theory.mechanism.ipr_rate_split` (the flow's amplifier and covariances).

    Returns
    -------
    tuple[np.ndarray, np.ndarray]
        ``(linear, gain)``, each (S,): the integrals over the run of the linear-flow part and the
        gain part (gain ≠ √(2/π)).
    """
    from localization.theory import mechanism as mech

    if not isinstance(flow, StartsFlow):
        raise TypeError(f"flow must be a StartsFlow (flow_from_starts), got {type(flow).__name__}")
    linear, gain = mech.ipr_rate_split(flow.weights, phi, cov0, cov1)
    return np.trapezoid(linear, flow.times, axis=-1), np.trapezoid(gain, flow.times, axis=-1)


class GainData(NamedTuple):
    """What the chapter's gain figure (``mechanism_gain``) shows (see :func:`gain_data`).

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


def gain_data(setting: Setup) -> GainData:
    """Return the effective gain of each task on :data:`GAIN_GRID` and the stability of its constant state.

    Gains by :func:`localization.theory.mechanism.effective_gain` (the exact amplifiers), stability
    by :func:`localization.theory.mechanism.constant_mode_stability` (exact quadrature).

    Parameters
    ----------
    setting : Setup
        The chapter's tasks (:func:`setup`).

    Returns
    -------
    GainData
        The points (400,), the gains (400,) and the stability of each task.
    """
    from localization.theory import mechanism as mech

    if not isinstance(setting, Setup):
        raise TypeError(f"setting must be a Setup (setup()), got {type(setting).__name__}")
    gains = {name: mech.effective_gain(phi, GAIN_GRID) for name, phi in setting.phi.items()}
    stability = {name: mech.constant_mode_stability(setting.phi[name], *setting.cov[name]) for name in gains}
    return GainData(GAIN_GRID, gains, stability)


def ipr_splits(
    setting: Setup, flows: dict[str, Trajectory], names: tuple[str, ...] = ("NLGP(3)", "Kur(5)")
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Return the two parts of the IPR's rate, Eq. (mech-ipr), along the flows of ``names``.

    Parameters
    ----------
    setting : Setup
        The chapter's tasks (:func:`setup`): the exact amplifiers and covariances.
    flows : dict
        Task name → :class:`~localization.trajectory.Trajectory` (:func:`integrate_flows`).
    names : tuple of str
        The tasks to split (default the two non-Gaussian ones), each a key of ``flows`` and ``setting.tasks``.

    Returns
    -------
    dict
        Task name → ``(linear, gain)``, each (C,) over the checkpoints
        (:func:`localization.theory.mechanism.ipr_rate_split`).
    """
    from localization.theory import mechanism as mech

    if not isinstance(setting, Setup):
        raise TypeError(f"setting must be a Setup (setup()), got {type(setting).__name__}")
    missing = [name for name in names if name not in flows or name not in setting.tasks]
    if missing:
        raise ValueError(f"names must be tasks of setting with a flow, got {missing} without one")
    return {
        name: mech.ipr_rate_split(np.asarray(flows[name].weights), setting.phi[name], *setting.cov[name])
        for name in names
    }
