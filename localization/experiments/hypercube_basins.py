r"""Basins of the hypercube flow: which fixed point, which peak site, and how the basins scale with n.

The neuron's exact flow on two sign-symmetric laws on :math:`\{-1,+1\}^n`
(:mod:`localization.theory.hypercube_flow`, the hypercube chapter's Eq. (hc-flow)) is

.. math::

   \dot w=f_1(w)-Sw,\qquad S=\tfrac12(\Sigma_0+\Sigma_1),

   f_1(w)=\sum_{x\in H}p_1(x)\,\operatorname{sign}\langle w,x\rangle\,x,

with :math:`H` the vertices with :math:`x_{n-1}=+1` and :math:`p_1(x)>0` (pairing :math:`x` with :math:`-x`: a vertex
and its partner contribute :math:`p_1(x)x` on whichever side is on, and nothing on a tie). Half the
vertices make each step half as dear as :func:`~localization.theory.hypercube_flow.flow`. A vertex with
:math:`p_1(x)=0` (a Monte Carlo law may have some) changes nothing where it switches, so its hyperplane
bounds no cell of the flow.

**Arrival, certified.** On the cell of :math:`w` (the sign pattern of :math:`\langle w,x\rangle`) the flow is
affine, with the cell's candidate :math:`w^\ast=S^{-1}f_1(w)`. If the ball of radius
:math:`\|w-w^\ast\|` around :math:`w^\ast` holds no hyperplane :math:`\langle\cdot,x\rangle=0`, i.e.
:math:`\|w-w^\ast\|<\min_x|\langle w^\ast,x\rangle|/\sqrt n`, then :math:`w^\ast` is an exact fixed point and both
the flow and its Euler steps from :math:`w` stay in the ball and converge to it: :math:`S` is symmetric
positive definite, so :math:`\|e^{-St}v\|` and :math:`\|(I-hS)v\|` (for :math:`h\lambda_{\max}(S)\le2`) never
exceed :math:`\|v\|`. :func:`flow_to_fixed_points` stops a start there ("arrived"), and confirms every
endpoint with the library's iteration :math:`w\leftarrow A(w)^{-1}c(w)`
(:func:`~localization.theory.hypercube_flow.fixed_point`) and its residual.

**Fixed points on a tie.** The certificate fails when the cell's fixed point lies *on* one of the cell's
hyperplanes, :math:`\langle w^\ast,x\rangle=0` (an exact cancellation in :math:`\langle x,f_1\rangle`; seen on the
Ising ring of 8 sites, in about 3 % of the starts). The flow in
the cell still converges to it, from that side, while across the hyperplane the jump :math:`2p_1(x)x` of
:math:`f_1` pushes away (half-stable). A start whose iterate equals its cell's :math:`w^\ast` to
:data:`ON_FIXED_POINT` (relative) is stopped there and counted as arrived on a tie (``Arrival.tied``).

**Fixed points and their depth.** Pairing :math:`x` with :math:`-x` again, :math:`\mathbb E_y\mathrm{ReLU}^2=\tfrac12
w^\top\Sigma_yw` and :math:`\mathbb E_1\mathrm{ReLU}=g_1(w)=\tfrac12\mathbb E_1|\langle w,X\rangle|`, so the loss is
:math:`\mathcal L(w)=\tfrac12-g_1(w)+\tfrac12w^\top Sw` with :math:`f_1=\nabla g_1`. :math:`g_1` is 1-homogeneous,
:math:`g_1(w)=\langle w,f_1(w)\rangle`, so at a fixed point (:math:`f_1(w^\ast)=Sw^\ast`)
:math:`\mathcal L(w^\ast)=\tfrac12-\tfrac12w^{\ast\top}Sw^\ast`: :func:`classify_fixed_points` reports it per class, so
the depths of the fixed points can be set beside their basins.

Contents: :func:`symmetric_flow` (the half-vertex form of a task), :func:`flow_to_fixed_points`,
:func:`classify_fixed_points` (up to the ring's 4n symmetries) and :func:`fixed_point_families` (near-equal
shapes), :func:`predict_peaks` and :func:`score_predictors` (which initial-weight statistic predicts the
peak site), :func:`uniform_share` and :func:`basin_survey` (all of it for one task and one key). How the basins
scale with n (the survey over n, pooled over keys, and a logistic fit) is
:mod:`localization.experiments.hypercube_basin_scaling`.
"""

from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from localization import validation as v
from localization.pytree import pytree_dataclass, static_field
from localization.theory import hypercube_flow, hypercube_laws

__all__ = [
    "SymmetricFlow",
    "symmetric_flow",
    "Arrival",
    "flow_to_fixed_points",
    "FixedPointClasses",
    "classify_fixed_points",
    "fixed_point_families",
    "PEAK_PREDICTORS",
    "predict_peaks",
    "PredictorScore",
    "score_predictors",
    "binomial_fraction",
    "uniform_share",
    "BasinSurvey",
    "basin_survey",
]

#: Largest ``|p(x) - p(-x)|`` (relative to ``max p``) accepted as sign symmetry: float64 round-off of a sum.
SYMMETRY_TOLERANCE = 1e-12

#: Two fixed points are one when some ring symmetry maps one within this relative distance of the other
#: (the iteration's fixed points are exact to ~1e-14; distinct ones differ by far more).
SAME_FIXED_POINT = 1e-8

#: A start whose Euler iterate equals its cell's fixed point to this relative distance has converged to
#: round-off (used only for fixed points the ball certificate cannot cover: those on a tie).
ON_FIXED_POINT = 1e-10

#: Times (on SGD's axis, t = steps x lr) at which :func:`flow_to_fixed_points` records each start's peak site.
SNAPSHOT_TIMES = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0)


@pytree_dataclass(eq=False)
class SymmetricFlow:
    r"""The flow :math:`\dot w=f_1(w)-Sw` of a sign-symmetric ``hypercube_flow.HypercubeTask``.

    Attributes
    ----------
    half : (H, n) float64, the vertices with :math:`x_{n-1}=+1` and :math:`p_1(x)>0` (H <= 2^(n-1)).
    weighted : (H, n) float64, :math:`p_1(x)\,x` on those vertices.
    s_half : (n, n) float64, :math:`S=\tfrac12(\Sigma_0+\Sigma_1)`.
    sigma1 : (n, n) float64, :math:`\Sigma_1`.
    n : int (static), the number of sites.
    """

    half: jax.Array
    weighted: jax.Array
    s_half: jax.Array
    sigma1: jax.Array
    n: int = static_field()

    def f1(self, w: ArrayLike) -> jax.Array:
        r"""Return :math:`f_1(w)` for (..., n) weights: (..., n) float64."""
        w = _weights("w", w, self.n)
        return jnp.sign(w @ self.half.T) @ self.weighted

    def velocity(self, w: ArrayLike) -> jax.Array:
        r"""Return the flow :math:`f_1(w)-Sw` for (..., n) weights: (..., n) float64."""
        w = _weights("w", w, self.n)
        return _velocity(w, self.half, self.weighted, self.s_half)


def _weights(name: str, w: ArrayLike, n: int) -> jax.Array:
    w = jnp.asarray(v.finite_real_array(name, w), jnp.float64)
    if w.ndim < 1 or w.shape[-1] != n:
        raise ValueError(f"{name} must have shape (..., n) with n = {n}, got {tuple(w.shape)}")
    return w


def _velocity(w, half, weighted, s_half):
    return jnp.sign(w @ half.T) @ weighted - w @ s_half  # s_half is symmetric


def symmetric_flow(task: hypercube_flow.HypercubeTask) -> SymmetricFlow:
    """Return the half-vertex form of a task whose two laws are sign-symmetric, p(x) = p(-x).

    Parameters
    ----------
    task : HypercubeTask
        Two class laws on {-1, +1}^n, n >= 2 (e.g. ``experiments.hypercube.task_laws``).

    Returns
    -------
    SymmetricFlow
        Its flow equals ``hypercube_flow.flow`` to round-off.

    Raises
    ------
    ValueError
        If a law is not sign-symmetric to :data:`SYMMETRY_TOLERANCE` (relative), or S is not positive definite.
    """
    if not isinstance(task, hypercube_flow.HypercubeTask):
        raise TypeError(f"task must be a hypercube_flow.HypercubeTask, got {type(task).__name__}")
    n = v.integer("task.n", task.n, 2)
    x = hypercube_laws.vertices(n)
    laws = {}
    for name in ("p0", "p1"):
        p = np.asarray(getattr(task, name), np.float64)
        gap = np.abs(p - p[::-1]).max() / p.max()  # vertex 2^n - 1 - k is -x_k
        if gap > SYMMETRY_TOLERANCE:
            raise ValueError(
                f"task.{name} must be sign-symmetric, p(x) = p(-x), to {SYMMETRY_TOLERANCE} relative; "
                f"got max |p(x) - p(-x)| / max p = {gap:.3g}"
            )
        laws[name] = p
    sigma0, sigma1 = ((x.T * laws[k]) @ x for k in ("p0", "p1"))
    lam_min = float(np.linalg.eigvalsh(0.5 * (sigma0 + sigma1)).min())
    if not lam_min > 1e-12:
        raise ValueError(
            f"task must have a positive-definite S = (Sigma0 + Sigma1) / 2 (the flow's fixed points are "
            f"S^-1 f1), got smallest eigenvalue {lam_min:.3g}"
        )
    keep = np.flatnonzero(laws["p1"][: 2 ** (n - 1)] > 0)  # bit n-1 clear: x_{n-1} = +1
    half = x[keep]
    return SymmetricFlow(
        half=jnp.asarray(half),
        weighted=jnp.asarray(laws["p1"][keep, None] * half),
        s_half=jnp.asarray(0.5 * (sigma0 + sigma1)),
        sigma1=jnp.asarray(sigma1),
        n=n,
    )


# -------------------------------------------------------------------------------------------------
# Integration to certified fixed points
# -------------------------------------------------------------------------------------------------


class Arrival(NamedTuple):
    r"""Where the flow from each start ends (:func:`flow_to_fixed_points`); R starts on a ring of n sites.

    Attributes
    ----------
    endpoints : (R, n) the last Euler iterate of each start.
    fixed_points : (R, n) the fixed point of each arrived start (for the others, the library's iteration
        from the endpoint, or zeros when ``confirm`` is False).
    arrived : (R,) bool, the endpoint lies in the certified ball of its fixed point, or (``tied``) equals
        its cell's fixed point to :data:`ON_FIXED_POINT` (module docstring).
    tied : (R,) bool, arrived on a fixed point with a tie, which the ball cannot certify.
    arrival_time : (R,) the time t at which it was certified (``inf`` if never).
    decision_time : (R,) the last time the peak site :math:`\arg\max_i|w_i|` changed (0 if never).
    snapshot_peaks : (R, K) the peak site at the first step with t >= ``snapshot_times[k]``; for a start
        certified earlier, the peak of its fixed point; -1 for a start given up before that time.
    snapshot_times : (K,) :data:`SNAPSHOT_TIMES`.
    certificate : (R,) :math:`\|w-w^\ast\|` over the fixed point's distance to its nearest hyperplane
        (< 1 when certified; inf on a tie).
    residual : the largest :math:`|\dot w|` of the exact flow (``hypercube_flow.flow``) at the certified
        fixed points. Not at those on a tie: there the flow jumps, and which side round-off puts
        :math:`w^\ast` on decides between 0 and :math:`p_1(x)x`.
    iteration_gap : the largest relative distance between a certified fixed point and the one the
        library's iteration finds from the same endpoint (round-off when both agree; ties excluded for the
        same reason).
    iteration_converged : (R,) bool, the library's iteration converged from the endpoint.
    steps : the number of Euler steps of the slowest start.
    """

    endpoints: np.ndarray
    fixed_points: np.ndarray
    arrived: np.ndarray
    tied: np.ndarray
    arrival_time: np.ndarray
    decision_time: np.ndarray
    snapshot_peaks: np.ndarray
    snapshot_times: np.ndarray
    certificate: np.ndarray
    residual: float
    iteration_gap: float
    iteration_converged: np.ndarray
    steps: int


@partial(jax.jit, static_argnames=("steps",))
def _euler_chunk(w, t, peak, t_peak, snap, half, weighted, s_half, lr, rho, times, steps):
    """Run ``steps`` Euler steps of size min(lr, rho |w| / |dw/dt|), recording peak changes and snapshots."""

    def step(carry, _):
        w, t, peak, t_peak, snap = carry
        vel = _velocity(w, half, weighted, s_half)
        norm_v = jnp.linalg.norm(vel, axis=-1)
        h = jnp.minimum(lr, rho * jnp.linalg.norm(w, axis=-1) / jnp.maximum(norm_v, 1e-300))
        w = w + h[:, None] * vel
        t_new = t + h
        new_peak = jnp.argmax(jnp.abs(w), axis=-1)
        t_peak = jnp.where(new_peak != peak, t_new, t_peak)
        crossed = (t[:, None] < times[None, :]) & (t_new[:, None] >= times[None, :])
        snap = jnp.where(crossed, new_peak[:, None], snap)
        return (w, t_new, new_peak, t_peak, snap), None

    return jax.lax.scan(step, (w, t, peak, t_peak, snap), None, length=steps)[0]


@jax.jit
def _certify(w, half, weighted, s_half):
    """Return the cell's fixed point w*, ||w - w*|| over w*'s distance to its nearest hyperplane, and over ||w*||."""
    w_star = jnp.linalg.solve(s_half, (jnp.sign(w @ half.T) @ weighted).T).T
    tie = jnp.abs(w_star @ half.T).min(axis=-1) / math.sqrt(w.shape[-1])
    gap = jnp.linalg.norm(w - w_star, axis=-1)
    ratio = jnp.where(tie > 0, gap / jnp.maximum(tie, 1e-300), jnp.inf)
    return w_star, ratio, gap / jnp.maximum(jnp.linalg.norm(w_star, axis=-1), 1e-300)


def _bucket(size: int, current: int) -> int:
    """Return the padded size of an active set of ``size`` rows, now padded to ``current``.

    A power of two that shrinks by factors of 4, and not below 256: every new shape is a new compilation,
    which costs more than the padded rows of a small set.
    """
    while current // 4 >= max(size, 256):
        current //= 4
    return current


def flow_to_fixed_points(
    w0: ArrayLike,
    task: hypercube_flow.HypercubeTask | SymmetricFlow,
    *,
    lr: float = 0.05,
    max_relative_step: float | None = None,
    max_time: float = 200.0,
    chunk_steps: int = 100,
    confirm: bool = True,
) -> Arrival:
    r"""Integrate the flow by forward Euler from each start until it provably arrives at a fixed point.

    The step is ``lr`` (the hypercube chapter's Euler flow, SGD's time axis), or, with
    ``max_relative_step`` :math:`\rho`, :math:`\min(\text{lr},\rho\|w\|/\|\dot w\|)`: while :math:`w` is small
    :math:`f_1` dominates and the flow is scale-free, so a step fixed in t is a large step relative to
    :math:`w`; :math:`\rho` bounds that relative step (the ODE's limit as :math:`\rho,\text{lr}\to0`).
    After every ``chunk_steps`` steps each start is checked against the certificate of the module
    docstring; certified starts stop.

    Parameters
    ----------
    w0 : ArrayLike
        (R, n) initial weights, none zero.
    task : HypercubeTask or SymmetricFlow
        Two sign-symmetric laws on {-1, +1}^n.
    lr : float
        Largest Euler step, > 0 and at most 2 / lambda_max(S) (beyond it Euler does not contract).
    max_relative_step : float or None
        :math:`\rho` > 0, or None for the fixed step ``lr``.
    max_time : float
        Time after which unarrived starts are given up, > 0.
    chunk_steps : int
        Steps between two certificate checks, >= 1.
    confirm : bool
        Run the library's iteration (``hypercube_flow.fixed_point``) from every endpoint and report its
        agreement (``iteration_gap``) and the flow's residual (needs the task, not only its
        SymmetricFlow).

    Returns
    -------
    Arrival
    """
    flow = task if isinstance(task, SymmetricFlow) else symmetric_flow(task)
    if confirm and not isinstance(task, hypercube_flow.HypercubeTask):
        raise ValueError("confirm=True needs task as a hypercube_flow.HypercubeTask (the library's iteration)")
    w0 = np.asarray(_weights("w0", w0, flow.n))
    if w0.ndim != 2:
        raise ValueError(f"w0 must have shape (R, n), got {w0.shape}")
    if np.any(np.linalg.norm(w0, axis=-1) == 0):
        raise ValueError("w0 must have no all-zero row (the flow has no direction at w = 0)")
    lam_max = float(np.linalg.eigvalsh(np.asarray(flow.s_half)).max())
    lr = v.positive("lr", lr)
    if lr * lam_max > 2:
        raise ValueError(f"lr must be <= 2 / lambda_max(S) = {2 / lam_max:.4g} (Euler contracts there), got {lr}")
    rho = np.inf if max_relative_step is None else v.positive("max_relative_step", max_relative_step)
    max_time = v.positive("max_time", max_time)
    chunk_steps = v.integer("chunk_steps", chunk_steps, 1)
    if not isinstance(confirm, bool):
        raise TypeError(f"confirm must be a bool, got {confirm!r}")

    r, n = w0.shape
    times = np.asarray(SNAPSHOT_TIMES, np.float64)
    w, t = w0.copy(), np.zeros(r)
    peak = np.argmax(np.abs(w0), axis=-1)
    t_peak, snap = np.zeros(r), np.full((r, times.size), -1, np.int64)
    steps, padded = 0, max(16, 1 << (r - 1).bit_length())
    pad = np.r_[np.arange(r), np.zeros(padded - r, np.int64)]
    w_star, ratio, rel = (
        np.asarray(o)[:r] for o in _certify(jnp.asarray(w[pad]), flow.half, flow.weighted, flow.s_half)
    )
    w_star = w_star.copy()
    ratio = ratio.copy()
    tied = (ratio >= 1) & (rel <= ON_FIXED_POINT)
    arrived = (ratio < 1) | tied
    arrival = np.where(arrived, 0.0, np.inf)
    while np.any(~arrived & (t < max_time)):
        act = np.flatnonzero(~arrived & (t < max_time))
        padded = _bucket(act.size, padded)
        pad = np.r_[act, np.full(padded - act.size, act[0])]
        out = _euler_chunk(
            jnp.asarray(w[pad]),
            jnp.asarray(t[pad]),
            jnp.asarray(peak[pad]),
            jnp.asarray(t_peak[pad]),
            jnp.asarray(snap[pad]),
            flow.half,
            flow.weighted,
            flow.s_half,
            jnp.float64(lr),
            jnp.float64(rho),
            jnp.asarray(times),
            chunk_steps,
        )
        cert = _certify(out[0], flow.half, flow.weighted, flow.s_half)  # on the padded set: one shape
        w_a, t_a, peak_a, tp_a, snap_a = (np.asarray(o)[: act.size] for o in out)
        w[act], t[act], peak[act], t_peak[act], snap[act] = w_a, t_a, peak_a, tp_a, snap_a
        steps += chunk_steps
        ws, rt, rl = (np.asarray(o)[: act.size] for o in cert)
        w_star[act], ratio[act] = ws, rt
        on_tie = (rt >= 1) & (rl <= ON_FIXED_POINT)
        now = (rt < 1) | on_tie
        tied[act[on_tie]] = True
        arrived[act[now]] = True
        arrival[act[now]] = t_a[now]
    if not np.all(np.isfinite(w)):
        raise ValueError("the Euler iteration produced non-finite weights")

    late = arrived[:, None] & (snap < 0)  # snapshots after arrival: the fixed point's peak
    snap = np.where(late, np.argmax(np.abs(w_star), axis=-1)[:, None], snap)
    fixed = np.where(arrived[:, None], w_star, 0.0)
    residual, gap, converged = 0.0, 0.0, np.zeros(r, bool)
    if confirm:
        fp, converged = hypercube_flow.fixed_point(w, task)
        fixed = np.where(arrived[:, None], w_star, fp)
        certified = arrived & ~tied
        if certified.any():
            rel_gap = np.linalg.norm(fp - w_star, axis=-1) / np.linalg.norm(w_star, axis=-1)
            gap = float(np.where(converged, rel_gap, np.inf)[certified].max())
            residual = float(np.abs(np.asarray(hypercube_flow.flow(w_star[certified], task))).max())
    return Arrival(
        endpoints=w,
        fixed_points=fixed,
        arrived=arrived,
        tied=tied,
        arrival_time=arrival,
        decision_time=t_peak,
        snapshot_peaks=snap,
        snapshot_times=times,
        certificate=ratio,
        residual=residual,
        iteration_gap=gap,
        iteration_converged=converged,
        steps=steps,
    )


# -------------------------------------------------------------------------------------------------
# Fixed points up to the ring's symmetries
# -------------------------------------------------------------------------------------------------


def _images(w: np.ndarray) -> np.ndarray:
    """(..., 4n, n): the images of (..., n) fields under x -> ±R^r S^s x (the ring's 4n symmetries)."""
    n = w.shape[-1]
    out = []
    for sign in (1.0, -1.0):
        for y in (w, w[..., ::-1]):
            out.extend(sign * np.roll(y, s, axis=-1) for s in range(n))
    return np.stack(out, axis=-2)


def _canonical(w: np.ndarray) -> np.ndarray:
    """Return the image of an (n,) field with its largest |entry| positive on site 0 (ties: the first such)."""
    imgs = _images(w)
    peak = np.abs(w).max()
    good = (imgs[:, 0] >= peak * (1 - 1e-12)) & (imgs[:, 0] > 0)
    return imgs[np.flatnonzero(good)[0]]


class FixedPointClasses(NamedTuple):
    r"""The distinct fixed points reached, up to the ring's symmetries (:func:`classify_fixed_points`).

    K classes, ordered by basin size (largest first); R starts.

    Attributes
    ----------
    labels : (R,) int64, the class of each start's fixed point (-1 if the start did not arrive).
    representatives : (K, n) each class's fixed point moved so that its largest :math:`|w_i|` is positive on
        site 0.
    counts : (K,) int64, the arrived starts in each class.
    fractions, standard_errors : (K,) the basin fractions among the arrived starts and their binomial
        standard errors :math:`\sqrt{p(1-p)/m}`.
    localized : (K,) bool, ``field_analysis.is_localized`` of each representative (the book's definition).
    share : (K,) its ``field_analysis.localization_share``.
    ipr : (K,) its IPR (``metrics.ipr``).
    loss : (K,) the exact loss at the fixed point, :math:`\tfrac12-\tfrac12w^{\ast\top}Sw^\ast`.
    reference : int, the class of ``reference`` (e.g. the localized fixed point from :math:`e_0`), -1 if
        no start reached it or none was given.
    peaks : (R,) int64, :math:`\arg\max_i|w^\ast_i|` of each start's fixed point (-1 if not arrived).
    peak_signs : (R,) float64, the sign of that entry (0 if not arrived).
    """

    labels: np.ndarray
    representatives: np.ndarray
    counts: np.ndarray
    fractions: np.ndarray
    standard_errors: np.ndarray
    localized: np.ndarray
    share: np.ndarray
    ipr: np.ndarray
    loss: np.ndarray
    reference: int
    peaks: np.ndarray
    peak_signs: np.ndarray


def classify_fixed_points(
    fixed_points: ArrayLike, arrived: ArrayLike, flow: SymmetricFlow, *, reference: ArrayLike | None = None
) -> FixedPointClasses:
    """Group fixed points that a ring symmetry (shift, reflection, sign) maps onto one another.

    Parameters
    ----------
    fixed_points : ArrayLike
        (R, n) fixed points (:attr:`Arrival.fixed_points`); rows not arrived are ignored.
    arrived : ArrayLike
        (R,) bool, which rows to classify.
    flow : SymmetricFlow
        The task's flow (for the loss at each fixed point).
    reference : ArrayLike or None
        (n,) a fixed point to find among the classes (``FixedPointClasses.reference``).

    Returns
    -------
    FixedPointClasses
    """
    if not isinstance(flow, SymmetricFlow):
        raise TypeError(f"flow must be a SymmetricFlow, got {type(flow).__name__}")
    n = flow.n
    fp = np.asarray(_weights("fixed_points", fixed_points, n))
    if fp.ndim != 2:
        raise ValueError(f"fixed_points must have shape (R, n), got {fp.shape}")
    arrived = np.asarray(arrived)
    if arrived.dtype != bool or arrived.shape != fp.shape[:1]:
        raise ValueError(f"arrived must be a bool array of shape ({fp.shape[0]},), got {arrived.dtype} {arrived.shape}")
    if np.any(np.linalg.norm(fp[arrived], axis=-1) == 0):
        raise ValueError("fixed_points must have no all-zero arrived row")
    from localization import field_analysis, metrics

    reps: list[np.ndarray] = []
    raw = np.full(len(fp), -1, np.int64)
    for i in np.flatnonzero(arrived):
        imgs = _images(fp[i])
        for k, rep in enumerate(reps):
            if np.min(np.linalg.norm(imgs - rep, axis=-1)) <= SAME_FIXED_POINT * np.linalg.norm(rep):
                raw[i] = k
                break
        else:
            raw[i] = len(reps)
            reps.append(_canonical(fp[i]))
    counts = np.bincount(raw[arrived], minlength=len(reps)).astype(np.int64)
    order = np.argsort(-counts, kind="stable")
    relabel = np.empty(len(reps), np.int64)
    relabel[order] = np.arange(len(reps))
    labels = np.where(raw >= 0, relabel[np.maximum(raw, 0)], -1)
    rep = np.asarray([reps[k] for k in order]).reshape(len(reps), n)
    counts = counts[order]
    m = max(int(arrived.sum()), 1)
    frac = counts / m
    ref = -1
    if reference is not None:
        r = np.asarray(_weights("reference", reference, n))
        if r.shape != (n,):
            raise ValueError(f"reference must have shape ({n},), got {r.shape}")
        imgs = _images(r)
        for k in range(len(rep)):
            if np.min(np.linalg.norm(imgs - rep[k], axis=-1)) <= SAME_FIXED_POINT * np.linalg.norm(rep[k]):
                ref = k
                break
    s_half = np.asarray(flow.s_half)
    empty = np.zeros(0)
    peaks = np.where(arrived, np.argmax(np.abs(fp), axis=-1), -1)
    signs = np.where(arrived, np.sign(fp[np.arange(len(fp)), np.maximum(peaks, 0)]), 0.0)
    return FixedPointClasses(
        labels=labels,
        representatives=rep,
        counts=counts,
        fractions=frac,
        standard_errors=np.sqrt(frac * (1 - frac) / m),
        localized=np.asarray(field_analysis.is_localized(rep)) if len(rep) else empty.astype(bool),
        share=np.asarray(field_analysis.localization_share(rep)) if len(rep) else empty,
        ipr=np.asarray(metrics.ipr(rep)) if len(rep) else empty,
        loss=0.5 - 0.5 * np.einsum("ki,ij,kj->k", rep, s_half, rep),
        reference=ref,
        peaks=peaks.astype(np.int64),
        peak_signs=signs,
    )


def fixed_point_families(representatives: ArrayLike, *, tolerance: float = 0.05) -> np.ndarray:
    """Group class representatives whose shapes agree to ``tolerance`` (relative) up to a ring symmetry.

    Many exact fixed points differ only slightly (neighbouring cells of nearly equal :math:`f_1`); a
    family collects them. Greedy in the given order: each representative joins the first family whose
    founder some symmetry maps within ``tolerance`` of it (distances relative to the founder's norm).

    Parameters
    ----------
    representatives : ArrayLike
        (K, n) fixed points (:attr:`FixedPointClasses.representatives`).
    tolerance : float
        Relative distance, > 0.

    Returns
    -------
    numpy.ndarray
        (K,) int64 family labels, 0, 1, ... in order of first appearance.
    """
    reps = np.asarray(v.finite_real_array("representatives", representatives))
    if reps.ndim != 2 or reps.shape[1] < 2:
        raise ValueError(f"representatives must have shape (K, n) with n >= 2, got {reps.shape}")
    tolerance = v.positive("tolerance", tolerance)
    founders: list[np.ndarray] = []
    out = np.empty(len(reps), np.int64)
    for k, rep in enumerate(reps):
        imgs = _images(rep)
        for j, f in enumerate(founders):
            if np.min(np.linalg.norm(imgs - f, axis=-1)) <= tolerance * np.linalg.norm(f):
                out[k] = j
                break
        else:
            out[k] = len(founders)
            founders.append(rep)
    return out


# -------------------------------------------------------------------------------------------------
# What decides the peak site
# -------------------------------------------------------------------------------------------------

#: The statistics of the initial weights tried as predictors of the final peak site, in the order of
#: :func:`predict_peaks`: the largest entry, the local average (covariance of class 1), the local
#: average of the signs alone, and the largest component of the initial velocity f_1(w0).
PEAK_PREDICTORS = ("largest |w0|", "largest |Sigma1 w0|", "largest |Sigma1 sign w0|", "largest |f1(w0)|")


def predict_peaks(w0: ArrayLike, flow: SymmetricFlow) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    r"""Return the site (and sign) each predictor of :data:`PEAK_PREDICTORS` assigns to each start.

    Parameters
    ----------
    w0 : ArrayLike
        (R, n) initial weights.
    flow : SymmetricFlow
        The task's flow (:math:`\Sigma_1` and :math:`f_1`).

    Returns
    -------
    dict
        name -> (sites, signs): (R,) int64 argmax of the statistic's absolute value, (R,) its sign there.
    """
    if not isinstance(flow, SymmetricFlow):
        raise TypeError(f"flow must be a SymmetricFlow, got {type(flow).__name__}")
    w0 = np.asarray(_weights("w0", w0, flow.n))
    if w0.ndim != 2:
        raise ValueError(f"w0 must have shape (R, n), got {w0.shape}")
    sigma1 = np.asarray(flow.sigma1)
    stats = (w0, w0 @ sigma1, np.sign(w0) @ sigma1, np.asarray(flow.f1(w0)))
    out = {}
    for name, s in zip(PEAK_PREDICTORS, stats, strict=True):
        site = np.argmax(np.abs(s), axis=-1)
        out[name] = (site.astype(np.int64), np.sign(s[np.arange(len(s)), site]))
    return out


class PredictorScore(NamedTuple):
    r"""How often one predictor names the final peak site (:func:`score_predictors`), over m starts.

    Attributes
    ----------
    hits, total : the starts whose peak site it names exactly, and m.
    accuracy, standard_error : hits / m and its binomial standard error.
    near_accuracy, near_standard_error : the same within one site (circular).
    sign_accuracy : among the hits, the fraction whose predicted sign is the fixed point's sign at its peak.
    gap_to_best, gap_standard_error : the best predictor's accuracy minus this one's, and the standard error
        of that paired difference, :math:`\sqrt{b+c-(b-c)^2/m}/m` with b, c the starts only one of the two names.
    """

    hits: int
    total: int
    accuracy: float
    standard_error: float
    near_accuracy: float
    near_standard_error: float
    sign_accuracy: float
    gap_to_best: float
    gap_standard_error: float


def binomial_fraction(k: int, m: int) -> tuple[float, float]:
    """Return the fraction k/m and its binomial standard error sqrt(p(1-p)/m).

    Parameters
    ----------
    k, m : int
        Hits and trials, 0 <= k <= m, m >= 1.

    Returns
    -------
    tuple[float, float]
    """
    m = v.integer("m", m, 1)
    k = v.integer("k", k, 0, m)
    p = k / m
    return p, math.sqrt(p * (1 - p) / m)


def score_predictors(
    predictions: dict[str, tuple[np.ndarray, np.ndarray]],
    peaks: ArrayLike,
    signs: ArrayLike,
    mask: ArrayLike,
    n: int,
) -> dict[str, PredictorScore]:
    """Score each predictor's sites against the final peak sites on the starts selected by ``mask``.

    Parameters
    ----------
    predictions : dict
        name -> ((R,) sites, (R,) signs), e.g. :func:`predict_peaks`.
    peaks, signs : ArrayLike
        (R,) final peak sites and the signs there (:attr:`FixedPointClasses.peaks`, ``peak_signs``).
    mask : ArrayLike
        (R,) bool, the starts to score (e.g. those that reached a localized fixed point); at least one.
    n : int
        Ring size (for "within one site").

    Returns
    -------
    dict
        name -> :class:`PredictorScore`.
    """
    n = v.integer("n", n, 2)
    peaks = np.asarray(v.finite_real_array("peaks", peaks)).astype(np.int64)
    signs = np.asarray(v.finite_real_array("signs", signs))
    mask = np.asarray(mask)
    if mask.dtype != bool or mask.shape != peaks.shape or signs.shape != peaks.shape or peaks.ndim != 1:
        raise ValueError(
            f"peaks, signs and mask (bool) must share one shape (R,), got {peaks.shape}, {signs.shape}, "
            f"{mask.dtype} {mask.shape}"
        )
    m = int(mask.sum())
    if m == 0:
        raise ValueError("mask must select at least one start")
    if not isinstance(predictions, dict) or not predictions:
        raise TypeError("predictions must be a non-empty dict name -> (sites, signs)")
    hit = {}
    for name, (site, sign) in predictions.items():
        site, sign = np.asarray(site), np.asarray(sign)
        if site.shape != peaks.shape or sign.shape != peaks.shape:
            raise ValueError(f"predictions[{name!r}] must hold two arrays of shape {peaks.shape}")
        hit[name] = (
            (site == peaks)[mask],
            (np.minimum(np.abs(site - peaks) % n, n - np.abs(site - peaks) % n) <= 1)[mask],
            (sign == signs)[mask],
        )
    best = max(hit, key=lambda k: hit[k][0].sum())
    out = {}
    for name, (exact, near, same_sign) in hit.items():
        acc, se = binomial_fraction(int(exact.sum()), m)
        near_acc, near_se = binomial_fraction(int(near.sum()), m)
        b = int(np.sum(hit[best][0] & ~exact))
        c = int(np.sum(~hit[best][0] & exact))
        out[name] = PredictorScore(
            hits=int(exact.sum()),
            total=m,
            accuracy=acc,
            standard_error=se,
            near_accuracy=near_acc,
            near_standard_error=near_se,
            sign_accuracy=float(same_sign[exact].mean()) if exact.any() else float("nan"),
            gap_to_best=(b - c) / m,
            gap_standard_error=math.sqrt(max(b + c - (b - c) ** 2 / m, 0.0)) / m,
        )
    return out


def uniform_share(w: ArrayLike) -> np.ndarray:
    r"""Return the share of :math:`\|w\|^2` in the uniform (wavenumber 0) mode, :math:`(\sum_iw_i)^2/(n\|w\|^2)`.

    The broad fixed points of the Ising and sign(Z) tasks are all of one sign, dominated by this mode; a
    start whose initial velocity :math:`f_1(w_0)` has a large uniform share tends to end at one.

    Parameters
    ----------
    w : ArrayLike
        (..., n) fields, none zero.

    Returns
    -------
    numpy.ndarray
        (...) shares in [0, 1].
    """
    w = np.asarray(v.finite_real_array("w", w))
    if w.ndim < 1 or w.shape[-1] < 1:
        raise ValueError(f"w must have shape (..., n) with n >= 1, got {w.shape}")
    energy = np.sum(w**2, axis=-1)
    if np.any(energy == 0):
        raise ValueError("w must have no all-zero field (its share is undefined)")
    return np.sum(w, axis=-1) ** 2 / (w.shape[-1] * energy)


# -------------------------------------------------------------------------------------------------
# One task, one key: everything
# -------------------------------------------------------------------------------------------------


class BasinSurvey(NamedTuple):
    r"""The flow from ``num`` small random starts on one task (:func:`basin_survey`).

    Attributes
    ----------
    w0 : (R, n) the initial weights.
    arrival : :class:`Arrival`.
    classes : :class:`FixedPointClasses` (its ``reference`` is the class of ``w_loc``).
    families : (K,) :func:`fixed_point_families` of the classes.
    w_loc : (n,) the localized fixed point, the iteration :math:`w\leftarrow A(w)^{-1}c(w)` from :math:`e_0`.
    localized, localized_se : the fraction of arrived starts whose fixed point is localized
        (``field_analysis.is_localized``) and its binomial standard error.
    at_loc, at_loc_se : the same for the fixed point ``w_loc`` (up to the ring's symmetries).
    predictions : :func:`predict_peaks` of ``w0``.
    scores : :func:`score_predictors` on the starts that reached a localized fixed point (empty if none).
    peak_settled : (K,) among those starts, the fraction whose peak site at ``arrival.snapshot_times[k]``
        is already the final one (NaN if none).
    seconds : wall time of the survey.
    """

    w0: np.ndarray
    arrival: Arrival
    classes: FixedPointClasses
    families: np.ndarray
    w_loc: np.ndarray
    localized: float
    localized_se: float
    at_loc: float
    at_loc_se: float
    predictions: dict
    scores: dict
    peak_settled: np.ndarray
    seconds: float


def basin_survey(
    key: jax.Array,
    task: hypercube_flow.HypercubeTask,
    num: int,
    *,
    init_scale: float = 1e-3,
    lr: float = 0.05,
    max_relative_step: float | None = None,
    max_time: float = 200.0,
    confirm: bool = True,
) -> BasinSurvey:
    """Flow ``num`` small random starts to their fixed points, classify them and score the peak predictors.

    The starts are ``initialisation.init_weights(key, n, init_scale, num=num)`` (Xavier-normal, the
    hypercube chapter's ``init_scale`` 1e-3); the flow is :func:`flow_to_fixed_points` with ``lr``,
    ``max_relative_step``, ``max_time`` and ``confirm``.

    Parameters
    ----------
    key : jax.Array
        PRNG key of the initial weights.
    task : HypercubeTask
        Two sign-symmetric laws on a ring of n sites.
    num : int
        Number of starts, >= 1.
    init_scale, lr, max_relative_step, max_time, confirm
        As in ``initialisation.init_weights`` and :func:`flow_to_fixed_points`.

    Returns
    -------
    BasinSurvey
    """
    import time

    from localization import initialisation

    start = time.perf_counter()
    flow = symmetric_flow(task)
    key = v.key("key", key)
    num = v.integer("num", num, 1)
    w0 = np.asarray(initialisation.init_weights(key, flow.n, init_scale, num=num, dtype=jnp.float64))
    arrival = flow_to_fixed_points(
        w0, task, lr=lr, max_relative_step=max_relative_step, max_time=max_time, confirm=confirm
    )
    w_loc, converged = hypercube_flow.fixed_point(np.eye(flow.n)[0], task)
    if not converged:
        raise ValueError("the iteration from e_0 did not converge: this task has no localized fixed point w_loc")
    classes = classify_fixed_points(arrival.fixed_points, arrival.arrived, flow, reference=w_loc)
    m = max(int(arrival.arrived.sum()), 1)
    on_localized = arrival.arrived & (classes.labels >= 0) & classes.localized[np.maximum(classes.labels, 0)]
    loc = binomial_fraction(int(on_localized.sum()), m)
    at = binomial_fraction(
        int(np.sum(arrival.arrived & (classes.labels == classes.reference))) if classes.reference >= 0 else 0, m
    )
    predictions = predict_peaks(w0, flow)
    scores = (
        score_predictors(predictions, classes.peaks, classes.peak_signs, on_localized, flow.n)
        if on_localized.any()
        else {}
    )
    settled = (arrival.snapshot_peaks == classes.peaks[:, None])[on_localized]
    return BasinSurvey(
        w0=w0,
        arrival=arrival,
        classes=classes,
        families=fixed_point_families(classes.representatives) if len(classes.counts) else np.zeros(0, np.int64),
        w_loc=w_loc,
        localized=loc[0],
        localized_se=loc[1],
        at_loc=at[0],
        at_loc_se=at[1],
        predictions=predictions,
        scores=scores,
        peak_settled=settled.mean(axis=0) if on_localized.any() else np.full(len(SNAPSHOT_TIMES), np.nan),
        seconds=time.perf_counter() - start,
    )
