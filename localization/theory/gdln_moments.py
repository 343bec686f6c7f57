r"""Moments of the gated deep linear network: :math:`\Sigma^{yx}(p)` and :math:`\Sigma^{xx}(p,q)`.

For a gating :math:`\tilde g(x)\in\{0,1\}^P` (:mod:`localization.theory.gates`) and the length-scale
task with balanced labels :math:`Y\in\{0,1\}` (:class:`localization.data.LengthscaleTask`),
:math:`\tilde x=\tilde g(x)\otimes x` and

.. math::

    b &= \mathbb E[Y\tilde x] = \tfrac12\,\mathbb E_1[\tilde x],\\
    A &= \mathbb E[\tilde x\tilde x^\top]\\
    &= \tfrac12\bigl(\mathbb E_0[\tilde x\tilde x^\top] + \mathbb E_1[\tilde x\tilde x^\top]\bigr)

(notes 001 Eqs. (49), (50), (53); :math:`\mathbb E_y` is the expectation given the class). Blocks
are gate-major: entries :math:`pN + j` of :math:`b` form :math:`\Sigma^{yx}(p)`.

Closed forms (each checked against ``localization.experiments.gdln.monte_carlo_moments`` in
``tests/test_gdln.py``):

* :func:`gate_correlation`: for standard normals with correlation :math:`r`,

  .. math::

      &\mathbb E\bigl[\mathbb 1(Z_i>0)\operatorname{erf}(gZ_j)\bigr]\\
      &\quad= \frac1\pi\arctan\frac{\sqrt2\,g\,r}{\sqrt{1+2g^2(1-r^2)}};

  hence, for the coordinate gate :math:`\mathbb 1(x_i>0)` on NLGP(ξ₁, g) data (for which
  :math:`x_i>0\iff z_i>0`), :math:`\Sigma^{yx}(p_i)_j = \text{gate\_correlation}(g, C_{ij})/(2\mathcal Z(g))`
  with :math:`C` the latent covariance of class 1 (:func:`coordinate_gate_moments`).
* :func:`single_gate_second_moment`: for one half-space gate :math:`\mathbb 1(\langle n,x\rangle>0)`
  and any sign-symmetric law without mass on the hyperplane, :math:`x\mapsto-x` swaps the gate's two
  sides and leaves :math:`xx^\top` unchanged, so :math:`\mathbb E_y[g\,xx^\top] = \tfrac12\Sigma_y` and
  :math:`A = \tfrac14(\Sigma_0+\Sigma_1)` — the same for every normal :math:`n`.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from localization import validation as v
from localization.data import NLGP, Gaussian, LengthscaleTask, nlgp_normaliser
from localization.theory.gates import Gating

__all__ = [
    "gate_correlation",
    "Moments",
    "coordinate_gate_moments",
    "single_gate_second_moment",
    "predict",
]


def gate_correlation(gain: ArrayLike, r: ArrayLike) -> np.ndarray:
    r"""Return :math:`\mathbb E[\mathbb 1(Z_i>0)\operatorname{erf}(gZ_j)]` for standard normals with correlation ``r``.

    Closed form :math:`\frac1\pi\arctan\bigl(\sqrt2\,g r/\sqrt{1+2g^2(1-r^2)}\bigr)` (module docstring;
    notes 001 Eq. (72) has :math:`2/\sqrt\pi` for :math:`1/\pi`).

    Parameters
    ----------
    gain : ArrayLike
        g > 0, finite.
    r : ArrayLike
        Correlations in [-1, 1]; broadcast against ``gain`` NumPy-style.

    Returns
    -------
    np.ndarray
        float64, the broadcast shape (a 0-d array for scalar inputs).
    """
    g = v.finite_real_array("gain", gain)
    r = v.finite_real_array("r", r)
    if np.any(g <= 0):
        raise ValueError(f"gain must be positive (valid range: 0 < gain < inf), got {gain!r}")
    if np.any(np.abs(r) > 1):
        raise ValueError(f"r must lie in [-1, 1] (a correlation), got {r[np.abs(r) > 1].ravel()[0]!r}")
    g, r = np.broadcast_arrays(g, r)
    return np.arctan(math.sqrt(2.0) * g * r / np.sqrt(1.0 + 2.0 * g * g * (1.0 - r * r))) / math.pi


class Moments(NamedTuple):
    """Exact GDLN moments: ``b`` (P N,) and ``A`` (P N, P N), float64, gate-major blocks."""

    b: np.ndarray
    A: np.ndarray


def _check_task(task: Any) -> LengthscaleTask:
    if not isinstance(task, LengthscaleTask):
        raise TypeError(f"task must be a data.LengthscaleTask, got {task!r}")
    return task


def single_gate_second_moment(task: LengthscaleTask, n: int) -> np.ndarray:
    r"""Return :math:`A = \tfrac14(\Sigma_0+\Sigma_1)` (N, N): exact for one half-space gate (module docstring).

    Parameters
    ----------
    task : LengthscaleTask
        The task (its class covariances).
    n : int
        Input size.

    Returns
    -------
    np.ndarray
        (N, N) float64.
    """
    s0, s1 = _check_task(task).covariances(n)
    return 0.25 * (s0 + s1)


def coordinate_gate_moments(task: LengthscaleTask, n: int, coordinate: int) -> Moments:
    r"""Return the exact ``b`` and ``A`` of the single coordinate gate :math:`\mathbb 1(x_i>0)`, ``i = coordinate``.

    Class 1 must be :class:`~localization.data.NLGP` (``b`` built on :func:`gate_correlation`) or
    :class:`~localization.data.Gaussian` (:math:`\mathbb E[\mathbb 1(Z_i>0)Z_j] = C_{ij}/\sqrt{2\pi}`);
    class 0 any model of the book (all are sign-symmetric).

    Parameters
    ----------
    task : LengthscaleTask
        The task; class 1 NLGP or Gaussian.
    n : int
        Ring size, >= 2.
    coordinate : int
        The gated coordinate i, in [0, n).

    Returns
    -------
    Moments
        ``b`` (n,) and ``A`` (n, n), float64.
    """
    task = _check_task(task)
    n = v.integer("n", n, 2)
    i = v.integer("coordinate", coordinate, 0)
    if i >= n:
        raise ValueError(f"coordinate must lie in [0, {n - 1}] for n = {n}, got {i}")
    m1 = task.model1
    if isinstance(m1, NLGP):
        g = float(m1.gain)
        c = m1.latent_covariance(n)[i]
        b = 0.5 * gate_correlation(g, np.clip(c, -1.0, 1.0)) / float(nlgp_normaliser(g))
    elif isinstance(m1, Gaussian):
        b = 0.5 * m1.latent_covariance(n)[i] / math.sqrt(2.0 * math.pi)
    else:
        raise TypeError(f"task.model1 must be data.NLGP or data.Gaussian for the closed form, got {m1!r}")
    return Moments(np.asarray(b, dtype=np.float64), single_gate_second_moment(task, n))


def predict(gating: Gating, w: ArrayLike, x: ArrayLike) -> jax.Array:
    r"""Return the GDLN's prediction :math:`\hat y(x)=\sum_p g_p(x)\langle w_p,x\rangle`.

    Parameters
    ----------
    gating : Gating
        The gates (P gates on N inputs).
    w : ArrayLike
        (P, N) or (P N,) weights.
    x : ArrayLike
        (..., N) inputs.

    Returns
    -------
    jax.Array
        (...) predictions.
    """
    if not isinstance(gating, Gating):
        raise TypeError(f"gating must satisfy theory.gates.Gating, got {gating!r}")
    p, n = gating.num_gates, gating.num_dims
    w = v.float_array("w", w, ndim_min=1)
    if w.size != p * n:
        raise ValueError(f"w must have P * N = {p * n} entries (P = {p}, N = {n}), got shape {tuple(w.shape)}")
    g = gating(x)
    x = jnp.asarray(x, dtype=g.dtype)
    return jnp.einsum("...p,...n,pn->...", g, x, jnp.asarray(w, dtype=g.dtype).reshape(p, n))
