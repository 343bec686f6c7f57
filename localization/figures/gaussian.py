r"""The Gaussian chapter's figure (``book/gaussian.md``) and the computations its checks call.

SGD on the Gaussian clone of NLGP against the exact flow's constant fixed point
(:func:`gaussian_clone_sgd`, drawn by :func:`localization.figures.flows.draw_mode_shares`); its
settings are the module constants. :func:`clone_sgd_statistics` reduces that run to the numbers the
chapter claims. :func:`flow_jax`, :func:`fourier_jacobian` and :func:`proposition_jacobian` test
the chapter's proposition on the fixed points' stability: the autodiff Jacobian of the flow in the
Fourier basis against the rates the proposition states.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from localization import plotting
from localization.figures.flows import draw_mode_shares
from localization.figures.registry import Built, check_scale, new_figure, register

__all__ = [
    "CLONE_N",
    "CLONE_XI",
    "CLONE_GAIN",
    "CLONE_STARTS",
    "CLONE_SGD",
    "CloneRun",
    "gaussian_clone_sgd",
    "clone_sgd_statistics",
    "flow_jax",
    "fourier_jacobian",
    "proposition_jacobian",
    "draw_mode_explorer",
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


def clone_sgd_statistics(run: CloneRun, late_step: int = 4000) -> dict[str, Any]:
    r"""Reduce the SGD run of :func:`gaussian_clone_sgd` to the statistics the chapter checks.

    Over the checkpoints from ``late_step`` on (t = 200 to 400 by default), in the Fourier basis
    :math:`Q` of the clone's covariances, with :math:`s = \sqrt{w^\top\Sigma_1 w}` and its value
    :math:`s^* = c/(1 + r(0))` at the constant fixed point (:math:`c = \sqrt{2/\pi}`).

    Parameters
    ----------
    run : CloneRun
        The data of :func:`gaussian_clone_sgd`.
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
    import math

    from localization.theory import mechanism as mech

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
    import math

    import jax.numpy as jnp

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
    import jax
    import jax.numpy as jnp

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
    import math

    from localization.theory import mechanism as mech

    if len(columns) not in (1, 2):
        raise ValueError(f"columns must hold one column or a pair, got {columns}")
    rates = mech.linear_mode_rates(lam0, lam1, columns[0])
    expected = np.diag(rates)
    if len(columns) == 2:
        a, b = columns
        rot = np.array([[math.cos(phase), -math.sin(phase)], [math.sin(phase), math.cos(phase)]])
        expected[np.ix_([a, b], [a, b])] = rot @ np.diag([rates[a], 0.0]) @ rot.T
    return expected


def draw_mode_explorer(fig: Any, cov0: Any, cov1: Any, path: Any, times: Any) -> dict[str, Any]:
    r"""Draw one frame of the chapter's explorer: which mode is stable, how fast, and one SGD run.

    Top left: the ratio :math:`r(k)=\lambda_0/\lambda_1` against frequency (log scale), the stable
    fixed point of :func:`localization.theory.gaussian.fixed_points` marked red; top right: the rates
    :math:`-\gamma_k` at it; bottom: the SGD run ``path`` (one curve per checkpoint), titled with the
    frequency holding the largest share of its final :math:`\|w\|^2` and the predicted one.
    Fixed margins instead of a constrained layout: the frames draw in about half the time.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        An empty figure (no layout engine).
    cov0, cov1 : array_like
        (N, N) circulant class covariances.
    path : array_like
        (checkpoints, N) weights of one SGD run.
    times : array_like
        (checkpoints,) their times.

    Returns
    -------
    dict
        The axes, by name (``"ratio"``, ``"rates"``, ``"sgd"``).
    """
    from localization import field_analysis
    from localization.theory import gaussian as gf
    from localization.theory import mechanism as mech

    path = np.asarray(path)
    if path.ndim != 2 or path.shape[1] != np.shape(cov0)[0]:
        raise ValueError(f"path must be (checkpoints, N) with N = {np.shape(cov0)[0]}, got {path.shape}")
    points = sorted(gf.fixed_points(cov0, cov1), key=lambda p: p.freq)
    win = [p for p in points if p.stable][0]
    rates = np.delete(win.rates, win.columns)
    freqs = np.delete(mech.circulant_spectra(cov0, cov1).freq, win.columns)
    axes = fig.subplot_mosaic(
        [["ratio", "rates"], ["sgd", "sgd"]],
        gridspec_kw=dict(left=0.17, right=0.9, bottom=0.09, top=0.93, hspace=0.55, wspace=0.4),
    )
    axes["ratio"].semilogy([p.freq for p in points], [p.ratio for p in points], "o-", ms=3, color="0.4")
    axes["ratio"].semilogy([win.freq], [win.ratio], "o", ms=8, color="C3")
    axes["ratio"].set(
        xlabel="frequency $k$",
        ylabel=r"$r(k)=\lambda_0/\lambda_1$",
        title=f"stable: $k$ = {win.freq}, $|u|$ = {win.amplitude:.3f}",
    )
    axes["rates"].semilogy(freqs, -rates, "o", ms=3, color="C0")
    axes["rates"].set(xlabel="frequency $k$", ylabel=r"$-\gamma_k$", title=f"slowest rate {rates.max():.2g}")
    final = np.asarray(path[-1], dtype=np.float64)
    k = int(field_analysis.dominant_frequency(final))
    plotting.plot_field_evolution(axes["sgd"], path, times)
    axes["sgd"].set_title(
        f"SGD: largest share at $k$ = {k} "
        f"({field_analysis.frequency_power(final)[k]:.0%} of "
        f"$\\|w\\|^2$); predicted $k$ = {win.freq}"
    )
    return axes
