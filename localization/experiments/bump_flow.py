r"""The noise-free counterpart of the near-zero fields: the effective flow's bump fixed point (simulation chapter).

Is the broad bump that SGD learns just below zero excess kurtosis a state of the dynamics, or the
mark of gradient noise? The effective flow (paper Eq. (5), :mod:`localization.theory.effective`) has no
noise; this module finds its fixed points and decides their stability by the spectrum of its
Jacobian there, not by how still a run looks. The SGD side is :mod:`localization.experiments.near_zero`.

* :func:`flow_bump` — the fixed point the flow reaches from a small bump (centred on a site, and
  between two sites), its localization share, width and IPR, and the eigenvalues of the Jacobian
  there, with the mode that shifts the bump along the ring singled out; :func:`flow_bumps` runs it
  over a family's parameters, :func:`flow_curve` with the excess kurtosis of each (a :class:`FlowCurve`);
* :func:`constant_growth` — the largest eigenvalue at the flow's constant fixed point: where it turns
  positive the constant is unstable and the bump is born.

Settings (module constants, which the chapter's figure uses): :data:`FLOW_GRID` and
:data:`FLOW_GRID_WIDE` (the family parameters at which the flow's fixed point is computed).

Deterministic, float64 (call ``localization.enable_float64()`` first).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from localization import data, metrics, theory
from localization import validation as v
from localization.field_analysis import LOCALIZED_SHARE, bump_width, localization_share
from localization.theory.amplifier import pad_quadrature

__all__ = [
    "FLOW_GRID",
    "FLOW_GRID_WIDE",
    "FlowBump",
    "flow_bump",
    "constant_growth",
    "flow_bumps",
    "FlowCurve",
    "flow_curve",
]

_G = dict(zip(("0.1", "0.167", "0.278", "0.464"), (float(g) for g in np.logspace(-1.0, 1.0, 10)[:4]), strict=True))
#: Family parameters of the flow's fixed points at the paper's ξ = (0.3, 0.7): the record's values and more.
FLOW_GRID = {
    "NLGP": (_G["0.1"], 0.12, 0.14, _G["0.167"], 0.19, 0.22, 0.25, _G["0.278"], 0.36, _G["0.464"]),
    "Kur": (5.6, 5.8, 5.85, 5.9, 6.0, 6.1, 6.3, 6.6, 7.0, 7.7),
}
#: ... and at twice those length-scales, ξ = (0.6, 1.4) (``near_zero.NEAR_ZERO.wide_xi``).
FLOW_GRID_WIDE = {
    "NLGP": (_G["0.167"], 0.19, 0.22, 0.25, _G["0.278"], 0.36, _G["0.464"]),
    "Kur": (5.75, 5.8, 5.85, 5.9, 6.1, 6.6, 7.7),
}


# -------------------------------------------------------------------------------------------------
# the noise-free flow: its bump fixed point and the spectrum there
# -------------------------------------------------------------------------------------------------
class FlowBump(NamedTuple):
    r"""The fixed point the effective flow reaches from a small bump, and its stability.

    Attributes
    ----------
    w_star : (n,) float64 fixed point, :math:`\max_i|F_i(w^*)|` at most ``residual``.
    residual : float, :math:`\max_i|F_i(w^*)|` (Newton's tolerance).
    share, width, ipr : float, int, float — :func:`~localization.field_analysis.localization_share`,
        :func:`~localization.field_analysis.bump_width` and the IPR of ``w_star``.
    localized : bool, ``share`` > :data:`~localization.field_analysis.LOCALIZED_SHARE`.
    eigenvalues : (n,) real parts of the eigenvalues of the flow's Jacobian at ``w_star``, ascending.
    translation : float, the eigenvalue whose eigenvector is the field's discrete derivative
        :math:`(w^*_{i+1}-w^*_{i-1})/2` (a shift of the bump along the ring; NaN for a constant field,
        which has no such mode). On a ring of sites a bump centred on a site and one centred between
        two sites are both fixed points; one has this eigenvalue negative, the other positive, both
        tiny for a broad bump.
    largest_other : float, the largest of the other eigenvalues (all of them for a constant field).
    stable : bool, every eigenvalue's real part negative (the translation mode included).
    center : float, 0 (a bump started on a site) or 0.5 (between two sites): the start that gave the
        stable fixed point (:func:`flow_bump` keeps it when the other is a saddle).
    constant_growth : float, the largest eigenvalue at the flow's constant fixed point
        (:func:`constant_growth`): negative where the constant is stable, positive where it is not.
    """

    w_star: np.ndarray
    residual: float
    share: float
    width: int
    ipr: float
    localized: bool
    eigenvalues: np.ndarray
    translation: float
    largest_other: float
    stable: bool
    center: float
    constant_growth: float


def _bump_start(n: int, center: float, width: float, amplitude: float) -> np.ndarray:
    d = np.abs(np.arange(n) - center)
    d = np.minimum(d, n - d)
    return amplitude * np.exp(-(d**2) / (2.0 * width**2))


def _spectrum(w_star, phi, cov0, cov1):
    jac = theory.effective_jacobian(w_star, phi, cov0, cov1)
    ev, vec = np.linalg.eig(jac)
    ev = ev.real
    gen = (np.roll(w_star, -1) - np.roll(w_star, 1)) / 2.0
    if np.linalg.norm(gen) <= 1e-6 * np.linalg.norm(w_star):  # a constant field: no translation mode
        return np.sort(ev), math.nan, float(ev.max())
    gen = gen / np.linalg.norm(gen)
    overlap = np.abs(vec.conj().T @ gen) / np.linalg.norm(vec, axis=0)
    i = int(np.argmax(overlap))
    return np.sort(ev), float(ev[i]), float(np.delete(ev, i).max())


def _setup(task, n):
    if not isinstance(task, data.LengthscaleTask):
        raise TypeError(f"task must be a data.LengthscaleTask, got {type(task).__name__}")
    n = v.integer("n", n, 4)
    v.require_float64("bump_flow", np.float64)
    cov0, cov1 = (np.asarray(s, dtype=np.float64) for s in task.covariances(n))
    # padded to a fixed number of nodes: Newton's method compiles once for every marginal
    return n, cov0, cov1, pad_quadrature(theory.amplifier_of(task.model1.marginal))


def _constant_growth(n, cov0, cov1, phi):
    w_c, _ = theory.effective_fixed_point(np.full(n, 0.01), phi, cov0, cov1, tol=1e-13, max_iter=100)
    return float(np.linalg.eigvals(theory.effective_jacobian(w_c, phi, cov0, cov1)).real.max())


def flow_bump(
    task: data.LengthscaleTask,
    n: int = 40,
    *,
    t_end: float = 1000.0,
    lr: float = 0.1,
    start_width: float = 2.0,
    start_amplitude: float = 1e-2,
) -> FlowBump:
    r"""Return the fixed point the effective flow reaches from a small bump, with its spectrum.

    Deterministic. From a Gaussian bump ``start_amplitude`` × :math:`e^{-d^2/2s^2}` (d the ring distance
    to the centre, s = ``start_width`` sites), centred on site 0 and, separately, between sites 0 and 1,
    the effective flow :math:`\dot w=\tfrac12[\varphi(a)-(\Sigma_0+\Sigma_1)w]` (paper Eq. (5), exact φ of
    the task's class-1 marginal, tabulated for the integration) runs to ``t_end`` by forward Euler steps
    of ``lr``; Newton's method (:func:`~localization.theory.effective_fixed_point`, exact φ) finishes the
    fixed point, and :func:`~localization.theory.effective_jacobian` gives the spectrum there. Of the two
    fixed points the one whose translation eigenvalue is the smaller is returned (the stable centring;
    for a constant field both are the same). A fixed point is *stable* when every eigenvalue is negative;
    that is decided by the spectrum, not by how still the flow looked. The constant fixed point's
    largest eigenvalue (:func:`constant_growth`) is returned with it.

    Parameters
    ----------
    task : data.LengthscaleTask
        The task (its class covariances at ``n`` and its class-1 marginal).
    n : int
        Ring size ≥ 4.
    t_end : float
        Flow time before Newton's method, > 0.
    lr : float
        Euler step of the flow, > 0.
    start_width, start_amplitude : float
        Width (sites) and height of the starting bump, > 0.

    Returns
    -------
    FlowBump

    Raises
    ------
    ValueError
        A bad argument, or Newton's method does not converge from either start (then raise ``t_end``).
    """
    t_end = v.positive("t_end", t_end)
    lr = v.positive("lr", lr)
    start_width = v.positive("start_width", start_width)
    start_amplitude = v.positive("start_amplitude", start_amplitude)
    n, cov0, cov1, phi = _setup(task, n)
    # the table only drives the flow near the fixed point; Newton's method finishes with the exact phi
    table = theory.tabulate_amplifier(phi, num=1025)
    steps = max(int(round(t_end / lr)), 1)
    found, errors = [], []
    for center in (0.0, 0.5):
        w0 = _bump_start(n, center, start_width, start_amplitude)
        run = theory.integrate_effective(w0, table, cov0, cov1, lr=lr, steps=steps, checkpoints=1)
        try:
            w_star, residual = theory.effective_fixed_point(
                np.asarray(run.weights[-1]), phi, cov0, cov1, tol=1e-12, max_iter=200
            )
        except ValueError as err:
            errors.append(str(err))
            continue
        ev, trans, other = _spectrum(w_star, phi, cov0, cov1)
        found.append((w_star, residual, ev, trans, other, center))
    if not found:
        raise ValueError(f"flow_bump: Newton's method did not converge from either start ({errors}); raise t_end")
    w_star, residual, ev, trans, other, center = min(found, key=lambda f: -math.inf if math.isnan(f[3]) else f[3])
    share = float(localization_share(w_star, n))
    return FlowBump(
        w_star=w_star,
        residual=float(residual),
        share=share,
        width=int(bump_width(w_star, n)),
        ipr=float(metrics.ipr(w_star)),
        localized=share > LOCALIZED_SHARE,
        eigenvalues=ev,
        translation=trans,
        largest_other=other,
        stable=bool(ev.max() < 0),
        center=center,
        constant_growth=_constant_growth(n, cov0, cov1, phi),
    )


def constant_growth(task: data.LengthscaleTask, n: int = 40) -> float:
    r"""Return the largest eigenvalue of the effective flow's Jacobian at its constant fixed point.

    The constant field :math:`w=c\,\mathbf 1` is a fixed point of the flow for translation-invariant
    data (Newton's method from :math:`0.01\cdot\mathbf 1` finds c). A negative value means the constant
    is stable (the flow returns to it, no bump); a positive one is the growth rate of the mode that
    leaves it, towards a bump.

    Parameters
    ----------
    task : data.LengthscaleTask
        The task.
    n : int
        Ring size ≥ 4.

    Returns
    -------
    float
    """
    return _constant_growth(*_setup(task, n))


def _family_tasks(family: str, params: Sequence[float], xi) -> list:
    """``data.family_task(family, p, xi=xi)`` at every parameter (validated, non-empty)."""
    if family not in data.FAMILIES:
        raise ValueError(f"family must be one of {sorted(data.FAMILIES)}, got {family!r}")
    params = [v.real_scalar(f"params[{i}]", p) for i, p in enumerate(params)]
    if not params:
        raise ValueError("params must be non-empty")
    return [data.family_task(family, p, xi=tuple(xi)) for p in params]


def flow_bumps(family: str, params: Sequence[float], *, xi: tuple[float, float], n: int = 40, **kwargs: Any):
    """Return :func:`flow_bump` for ``data.family_task(family, p, xi=xi)`` at every parameter.

    Parameters
    ----------
    family : str
        A family of ``data.FAMILIES`` with a closed-form marginal ("NLGP", "Kur").
    params : sequence of float
        The family parameters (non-empty).
    xi : (float, float)
        The two length-scales.
    n : int
        Ring size.
    **kwargs
        Passed to :func:`flow_bump`.

    Returns
    -------
    list of FlowBump
        One per parameter, in order.
    """
    return [flow_bump(t, n, **kwargs) for t in _family_tasks(family, params, xi)]


class FlowCurve(NamedTuple):
    """The effective flow's fixed points along one family at one pair of length-scales (:func:`flow_curve`).

    Attributes
    ----------
    family : str; xi : (ξ₀, ξ₁); params, excess_kurtosis : (P,).
    bumps : list of :class:`FlowBump` (P), in the order of ``params``.
    constant_growth : (P,) :func:`constant_growth` (the constant field's largest eigenvalue).
    """

    family: str
    xi: tuple
    params: np.ndarray
    excess_kurtosis: np.ndarray
    bumps: list
    constant_growth: np.ndarray

    @property
    def share(self) -> np.ndarray:
        """(P,) localization share of each fixed point."""
        return np.array([b.share for b in self.bumps])

    @property
    def width(self) -> np.ndarray:
        """(P,) bump width (sites) of each fixed point."""
        return np.array([b.width for b in self.bumps])


def flow_curve(family: str, params: Sequence[float], *, xi: tuple[float, float], n: int = 40) -> FlowCurve:
    """Return the :class:`FlowCurve` of a family: :func:`flow_bump` and the exact excess kurtosis at every parameter.

    Deterministic (float64: call ``localization.enable_float64()`` first).

    Parameters
    ----------
    family : str
        A family of ``data.FAMILIES`` with a closed-form marginal ("NLGP", "Kur").
    params : sequence of float
        The family parameters (non-empty), e.g. ``FLOW_GRID[family]``.
    xi : (float, float)
        The two length-scales.
    n : int
        Ring size.

    Returns
    -------
    FlowCurve
    """
    tasks = _family_tasks(family, params, xi)
    bumps = [flow_bump(t, n) for t in tasks]
    return FlowCurve(
        family=family,
        xi=tuple(xi),
        params=np.asarray(params, dtype=np.float64),
        excess_kurtosis=np.array([t.marginals[1].excess_kurtosis for t in tasks]),
        bumps=bumps,
        constant_growth=np.array([b.constant_growth for b in bumps]),
    )
