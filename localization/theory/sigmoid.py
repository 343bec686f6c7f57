r"""Closed forms for the erf network of notes 001 §3 and notes 004: bias flow, spread, starting loss.

Model (notes 001 Eq. (37), notes 004 Eq. (16)): :math:`\hat y(x)=\frac1K\sum_k\sigma(\langle w_k,x\rangle+b_k)`
with :math:`\sigma(h)=\operatorname{erf}(ch)`, :math:`c=1/\sqrt2` unless stated (so
:math:`\sigma'(h)=\sqrt{2/\pi}\,e^{-h^2/2}`), labels :math:`Y\in\{-1,+1\}` with :math:`P(Y=\pm1)=\tfrac12`,
:math:`Y=+1` the class with covariance :math:`\Sigma_1`, loss :math:`\tfrac12\mathbb E(\hat y-Y)^2`, time in
units of :math:`\tau`. On Gaussian classes the preactivation of neuron :math:`k` is
:math:`h_k\sim\mathcal N(0,w_k^\top\Sigma_yw_k)`; everything below follows from one identity: for
:math:`u\sim\mathcal N(b,s^2)`, :math:`e^{-c^2u^2}` times the density of :math:`u` is a Gaussian in
:math:`u` with mean :math:`b/(1+2c^2s^2)` and variance :math:`s^2/(1+2c^2s^2)`, and
:math:`\mathbb E\operatorname{erf}(\alpha v+\beta)=\operatorname{erf}\bigl((\alpha m+\beta)/\sqrt{1+2\alpha^2t}\bigr)`
for :math:`v\sim\mathcal N(m,t)`. Hence (:func:`mean_slope`, :func:`mean_output_slope`)

.. math::

    \begin{aligned}
    A(s^2,b)&=\mathbb E\,\sigma'(u)=\frac{2c}{\sqrt\pi}\,\frac{e^{-c^2b^2/(1+2c^2s^2)}}{\sqrt{1+2c^2s^2}},\\
    B(s^2,b)&=\mathbb E\,\sigma(u)\sigma'(u)\\
    &=A(s^2,b)\,\operatorname{erf}\frac{cb}{\sqrt{(1+2c^2s^2)(1+4c^2s^2)}},
    \end{aligned}

and the single-neuron bias flow (:func:`bias_drift`)
:math:`\tau\dot b=\tfrac12[y_1A(\sigma_1^2,b)-B(\sigma_1^2,b)]+\tfrac12[y_0A(\sigma_0^2,b)-B(\sigma_0^2,b)]`.
For two neurons with preactivation variances :math:`s_{11},s_{kk}` and covariance :math:`s_{1k}`
(:func:`cross_output_slope`, :math:`c=1/\sqrt2`)

.. math::

    \begin{aligned}
    &\mathbb E\,\sigma(h_k+b_k)\sigma'(h_1+b_1)\\
    &\quad=A(s_{11},b_1)\,
    \operatorname{erf}\frac{b_k-s_{1k}b_1/(1+s_{11})}{\sqrt{2\,(1+s_{kk}-s_{1k}^2/(1+s_{11}))}} .
    \end{aligned}

Spread of preactivations (notes 004 Eqs. (9)–(10)): for independent
:math:`Z_1\sim\mathcal N(0,\sigma_1^2)`, :math:`Z_0\sim\mathcal N(0,\sigma_0^2)`,
:math:`P(|Z_1|>|Z_0|)=\tfrac2\pi\arctan(\sigma_1/\sigma_0)` (:func:`spread_probability`), since
:math:`Z_1\sigma_0/(Z_0\sigma_1)` is standard Cauchy. Starting losses on Gaussian classes at
:math:`b=0` (:func:`erf_start_loss`, :func:`relu_start_loss`): :math:`4\mathcal L` of notes 004 Eqs. (19)
and (26). Monte Carlo counterparts for any task of :mod:`localization.data` are in
:mod:`localization.experiments.sigmoid`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.linalg
import scipy.special
from jax.typing import ArrayLike

from localization import validation as v

__all__ = [
    "DEFAULT_C",
    "mean_slope",
    "mean_output_slope",
    "cross_output_slope",
    "bias_drift",
    "committee_bias_drift",
    "committee_bias_linearisation",
    "notes001_eq42",
    "notes001_cross_term",
    "notes001_label_term",
    "notes001_self_term",
    "class_variances",
    "spread_probability",
    "rayleigh_optimum",
    "erf_start_loss",
    "relu_start_loss",
]

#: The erf gain c of σ(h) = erf(c h) used by notes 001 §3 and notes 004: 1/√2.
DEFAULT_C = 1.0 / math.sqrt(2.0)


def _var(name: str, value: Any) -> np.ndarray:
    arr = v.finite_real_array(name, value, "0 <= variance < inf")
    if np.any(arr < 0):
        raise ValueError(f"{name} must be a variance >= 0, got {value!r}")
    return arr


def _gain(c: Any) -> float:
    return v.positive("c", c)


def mean_slope(s2: ArrayLike, b: ArrayLike, c: float = DEFAULT_C) -> np.ndarray:
    r"""Return :math:`A(s^2,b)=\mathbb E\,\sigma'(Z+b)`, :math:`Z\sim\mathcal N(0,s^2)`.

    Here :math:`\sigma=\operatorname{erf}(c\,\cdot)`.

    Parameters
    ----------
    s2 : ArrayLike
        Variances :math:`s^2` >= 0.
    b : ArrayLike
        Biases (finite); broadcast against ``s2``.
    c : float
        Gain of the erf, > 0.

    Returns
    -------
    np.ndarray
        float64, the broadcast shape.
    """
    s2, b, c = _var("s2", s2), v.finite_real_array("b", b), _gain(c)
    d = 1.0 + 2.0 * c * c * s2
    return 2.0 * c / math.sqrt(math.pi) * np.exp(-c * c * b * b / d) / np.sqrt(d)


def mean_output_slope(s2: ArrayLike, b: ArrayLike, c: float = DEFAULT_C) -> np.ndarray:
    r"""Return :math:`B(s^2,b)=\mathbb E\,\sigma(Z+b)\sigma'(Z+b)`, :math:`Z\sim\mathcal N(0,s^2)` (odd in ``b``).

    Parameters
    ----------
    s2 : ArrayLike
        Variances :math:`s^2` >= 0.
    b : ArrayLike
        Biases (finite); broadcast against ``s2``.
    c : float
        Gain of the erf, > 0.

    Returns
    -------
    np.ndarray
        float64, the broadcast shape.
    """
    s2, b, c = _var("s2", s2), v.finite_real_array("b", b), _gain(c)
    a2 = c * c * s2
    return mean_slope(s2, b, c) * scipy.special.erf(c * b / np.sqrt((1.0 + 2.0 * a2) * (1.0 + 4.0 * a2)))


def cross_output_slope(s11: ArrayLike, skk: ArrayLike, s1k: ArrayLike, b1: ArrayLike, bk: ArrayLike) -> np.ndarray:
    r"""Return :math:`\mathbb E\,\sigma(h_k+b_k)\,\sigma'(h_1+b_1)` for a centred Gaussian pair.

    Here :math:`\sigma=\operatorname{erf}(\cdot/\sqrt2)`.

    Parameters
    ----------
    s11, skk : ArrayLike
        Variances of :math:`h_1, h_k` (>= 0).
    s1k : ArrayLike
        Their covariance, :math:`s_{1k}^2\le s_{11}s_{kk}`.
    b1, bk : ArrayLike
        The biases :math:`b_1, b_k`.

    Returns
    -------
    np.ndarray
        float64, the broadcast shape of the arguments.
    """
    s11, skk = _var("s11", s11), _var("skk", skk)
    s1k, b1, bk = (v.finite_real_array(n, x) for n, x in (("s1k", s1k), ("b1", b1), ("bk", bk)))
    if np.any(s1k**2 > s11 * skk * (1.0 + 1e-12) + 1e-300):
        raise ValueError(f"s1k must satisfy s1k**2 <= s11 * skk (a valid covariance), got s1k={s1k!r}")
    num = bk - s1k * b1 / (1.0 + s11)
    den = np.sqrt(2.0 * (1.0 + skk - s1k**2 / (1.0 + s11)))
    return mean_slope(s11, b1) * scipy.special.erf(num / den)


def _labels(labels: Any) -> tuple[float, float]:
    if not isinstance(labels, tuple) or len(labels) != 2:
        raise TypeError(f"labels must be a tuple (y0, y1), got {labels!r}")
    y0, y1 = (v.real_scalar(f"labels[{i}]", y) for i, y in enumerate(labels))
    return y0, y1


def bias_drift(
    s1sq: ArrayLike, s0sq: ArrayLike, b: ArrayLike, *, labels: tuple[float, float] = (-1.0, 1.0), c: float = DEFAULT_C
) -> np.ndarray:
    r"""Return the single-neuron bias flow on Gaussian classes.

    The flow is :math:`\tau\,db/dt=-\partial_b\tfrac12\mathbb E(\hat y-Y)^2`.

    ``s1sq`` :math:`=w^\top\Sigma_1w`, ``s0sq`` :math:`=w^\top\Sigma_0w` (>= 0), ``b`` the bias; ``labels``
    :math:`(y_0,y_1)` (default :math:`(-1,+1)` as notes 001 §3 "Multiple Neurons" and notes 004 use;
    ``(0, 1)``, with ``c=1`` (σ = erf), is the setting in which notes 001 Eqs. (38)–(43) hold: their single-neuron
    part uses labels 0/1 and, despite the stated erf(·/√2), σ = erf).

    Parameters
    ----------
    s1sq, s0sq : ArrayLike
        :math:`w^\top\Sigma_1w` and :math:`w^\top\Sigma_0w` (>= 0).
    b : ArrayLike
        The bias.
    labels : tuple[float, float]
        :math:`(y_0, y_1)`.
    c : float
        Gain of the erf, > 0.

    Returns
    -------
    np.ndarray
        :math:`\tau\,db/dt`, float64, the broadcast shape.
    """
    y0, y1 = _labels(labels)
    t1 = y1 * mean_slope(s1sq, b, c) - mean_output_slope(s1sq, b, c)
    t0 = y0 * mean_slope(s0sq, b, c) - mean_output_slope(s0sq, b, c)
    return 0.5 * (t1 + t0)


def _weights(W: ArrayLike, N: int) -> np.ndarray:
    W = np.asarray(v.finite_real_array("W", W), dtype=np.float64)
    if W.ndim != 2 or W.shape[1] != N:
        raise ValueError(f"W must have shape (K, N) with N = {N} (the covariances' size), got {W.shape}")
    return W


def committee_bias_drift(W: ArrayLike, b: ArrayLike, cov0: ArrayLike, cov1: ArrayLike) -> np.ndarray:
    r"""Return the bias flow :math:`K\tau\,db_j/dt` of every neuron of a soft committee machine.

    The machine is :math:`\frac1K\sum_k\sigma(\langle w_k,x\rangle+b_k)`.

    With labels -1/+1 it is :math:`\tfrac12\sum_{y}[yA(s^y_{jj},b_j)
    -\frac1K\sum_k E^y_{jk}]` with :math:`E^y_{jk}` = :func:`cross_output_slope` on
    :math:`s^y=W\Sigma_yW^\top` (the notes' :math:`\sigma_{ij}` for :math:`y=1`, :math:`\tau_{ij}` for
    :math:`y=-1`). For K = 1 this is :func:`bias_drift`.

    Parameters
    ----------
    W : ArrayLike
        (K, N) receptive fields.
    b : ArrayLike
        (K,) biases.
    cov0, cov1 : ArrayLike
        (N, N) class covariances.

    Returns
    -------
    np.ndarray
        (K,) float64.
    """
    cov0, cov1 = v.covariance_pair(("cov0", "cov1"), cov0, cov1)
    W = _weights(W, cov0.shape[0])
    K = W.shape[0]
    b = v.finite_real_array("b", b)
    if b.shape != (K,):
        raise ValueError(f"b must have shape (K,) = ({K},), got {b.shape}")
    out = np.zeros(K)
    for y, cov in ((1.0, cov1), (-1.0, cov0)):
        s = W @ cov @ W.T
        d = np.diag(s)
        cross = cross_output_slope(d[:, None], d[None, :], s, b[:, None], b[None, :])  # [j, k]
        out += 0.5 * (y * mean_slope(d, b) - cross.sum(axis=1) / K)
    return out


def committee_bias_linearisation(W: ArrayLike, cov0: ArrayLike, cov1: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    r"""(D (K,), M (K, K)) with :math:`K\tau\,\dot b=D-Mb+O(|b|^2)` near :math:`b=0` (:func:`committee_bias_drift`).

    :math:`D` is the drift at :math:`b=0` (each neuron as alone, the label term). The label term is
    even in :math:`b_j`, so only the cross terms are linear: expanding the erf of
    :func:`cross_output_slope` at 0, with :math:`c_{jk}=(1+s_{kk}-s_{jk}^2/(1+s_{jj}))^{-1/2}` and
    :math:`P^y_{jk}=\frac1{2K}A(s^y_{jj},0)\sqrt{2/\pi}\,c^y_{jk}`,
    :math:`M=\sum_y\bigl[P^y-\operatorname{diag}_j\bigl(\sum_kP^y_{jk}s^y_{jk}/(1+s^y_{jj})\bigr)\bigr]`.

    Parameters
    ----------
    W : ArrayLike
        (K, N) receptive fields.
    cov0, cov1 : ArrayLike
        (N, N) class covariances.

    Returns
    -------
    tuple[np.ndarray, np.ndarray]
        ``(D, M)``: (K,) and (K, K) float64.
    """
    cov0, cov1 = v.covariance_pair(("cov0", "cov1"), cov0, cov1)
    W = _weights(W, cov0.shape[0])
    K = W.shape[0]
    D = committee_bias_drift(W, np.zeros(K), cov0, cov1)
    M = np.zeros((K, K))
    for cov in (cov1, cov0):
        s = W @ cov @ W.T
        d = np.diag(s)
        c = 1.0 / np.sqrt(1.0 + d[None, :] - s**2 / (1.0 + d[:, None]))
        P = mean_slope(d, 0.0)[:, None] * math.sqrt(2 / math.pi) * c / (2 * K)
        M += P - np.diag((P * s).sum(axis=1) / (1.0 + d))
    return D, M


def notes001_eq42(s1sq: ArrayLike, s0sq: ArrayLike, b: ArrayLike) -> np.ndarray:
    r"""Return notes 001 Eq. (42) as printed (right-hand side), for comparison only.

    Uses :math:`\sigma=\operatorname{erf}` (not erf(·/√2)) and the label term of class 1 only, as the
    printed Eq. (38) does.

    Parameters
    ----------
    s1sq, s0sq, b : ArrayLike
        As in :func:`bias_drift` (``s1sq`` > 0).

    Returns
    -------
    np.ndarray
        float64, the broadcast shape.
    """
    s1, s0, b = _var("s1sq", s1sq), _var("s0sq", s0sq), v.finite_real_array("b", b)

    def term(s):
        r = 2 * s / (2 * s + 1) - 1
        return np.exp(r * b * b) * scipy.special.erf(r / np.sqrt(1 + 2 * s / (2 * s + 1)) * b)

    if np.any(s1 <= 0):
        raise ValueError(f"s1sq must be > 0 (the printed Eq. (42) divides by it), got {s1sq!r}")
    first = np.exp((1 / (2 * s1)) * (1 / (2 * s1 + 1) - 1) * b * b)
    return (first + term(s1) + np.sqrt((2 * s1 + 1) / (2 * s0 + 1)) * term(s0)) / (
        math.sqrt(math.pi) * np.sqrt(2 * s1 + 1)
    )


def notes001_cross_term(s11: ArrayLike, skk: ArrayLike, s1k: ArrayLike, b1: ArrayLike, bk: ArrayLike) -> np.ndarray:
    r"""Return the printed erf argument of the :math:`k>1` terms of notes 001 §3, times its prefactor.

    The terms are those of "Multiple Neurons", as printed: what the notes give for
    :math:`\mathbb E\,\sigma(h_k+b_k)\sigma'(h_1+b_1)` (``s11`` > 0). For comparison with
    :func:`cross_output_slope` only.

    Parameters
    ----------
    s11, skk, s1k, b1, bk : ArrayLike
        As in :func:`cross_output_slope` (``s11`` > 0).

    Returns
    -------
    np.ndarray
        float64, the broadcast shape.
    """
    s11, skk = _var("s11", s11), _var("skk", skk)
    s1k, b1, bk = (v.finite_real_array(n, x) for n, x in (("s1k", s1k), ("b1", b1), ("bk", bk)))
    if np.any(s11 <= 0):
        raise ValueError(f"s11 must be > 0 (the printed formula divides by it), got {s11!r}")
    ck = 1 + (skk - s1k**2 / s11)
    num = -(s1k / s11) * b1 / (s11 + 1) + bk
    den = np.sqrt(2 * ck) * np.sqrt(1 + s1k**2 / (s11 + (s11 * skk - s1k**2)) / (s11 + 1))
    pref = math.sqrt(2 / math.pi) / np.sqrt(s11 + 1) * np.exp(-b1 * b1 / (2 * (s11 + 1)))
    return pref * scipy.special.erf(num / den)


def notes001_label_term(s1sq: ArrayLike, s0sq: ArrayLike, b: ArrayLike) -> np.ndarray:
    r"""Return the label term of notes 001 §3 "Multiple Neurons" as printed, for comparison only.

    :math:`\sqrt{2/\pi}\bigl(e^{-b^2/(2(\sigma_{11}+1))}/\sqrt{\sigma_{11}+1}
    -e^{-b^2/(2(\tau_{11}+1))}/\sqrt{\tau_{11}+1}\bigr)`: twice the right
    :math:`\tfrac12[A(\sigma_{11},b)-A(\tau_{11},b)]` (the class weights ½ are missing).

    Parameters
    ----------
    s1sq, s0sq : ArrayLike
        :math:`\sigma_{11}=w^\top\Sigma_1w` and :math:`\tau_{11}=w^\top\Sigma_0w` (>= 0).
    b : ArrayLike
        The bias :math:`b_1` (finite); broadcast.

    Returns
    -------
    np.ndarray
        float64, the broadcast shape.
    """
    s, t, b = _var("s1sq", s1sq), _var("s0sq", s0sq), v.finite_real_array("b", b)
    return math.sqrt(2 / math.pi) * (
        np.exp(-b * b / (2 * (s + 1))) / np.sqrt(s + 1) - np.exp(-b * b / (2 * (t + 1))) / np.sqrt(t + 1)
    )


def notes001_self_term(s1sq: ArrayLike, b: ArrayLike) -> np.ndarray:
    r"""Return the :math:`k=1` bracket of notes 001 §3 "Multiple Neurons" as printed, for comparison only.

    :math:`e^{-\frac12(1-r)b^2}\operatorname{erf}\bigl((1-r)b/(\sqrt2\sqrt{1+r})\bigr)/\sqrt{s+1}`
    with :math:`r=s/(s+1)`: the self term :math:`B(s,b)` of :func:`mean_output_slope` without the
    factor :math:`\sqrt{2/\pi}` of :math:`\sigma'`.

    Parameters
    ----------
    s1sq : ArrayLike
        :math:`\sigma_{11}=w^\top\Sigma_1w` (>= 0).
    b : ArrayLike
        The bias :math:`b_1` (finite); broadcast.

    Returns
    -------
    np.ndarray
        float64, the broadcast shape.
    """
    s, b = _var("s1sq", s1sq), v.finite_real_array("b", b)
    r = s / (s + 1)
    return (
        np.exp(-0.5 * (1 - r) * b * b) / np.sqrt(s + 1) * scipy.special.erf((1 - r) * b / math.sqrt(2) / np.sqrt(1 + r))
    )


def class_variances(W: ArrayLike, cov: ArrayLike) -> np.ndarray:
    r"""Return the preactivation variances :math:`w_k^\top\Sigma w_k` of the rows of ``W``.

    Parameters
    ----------
    W : ArrayLike
        (K, N) fields, or one (N,) field (treated as K = 1).
    cov : ArrayLike
        (N, N) class covariance :math:`\Sigma`.

    Returns
    -------
    np.ndarray
        (K,) float64.
    """
    W = np.atleast_2d(v.finite_real_array("W", W))
    cov = v.finite_real_array("cov", cov)
    if W.ndim != 2 or cov.shape != (W.shape[1], W.shape[1]):
        raise ValueError(f"W must be (K, N) or (N,) and cov (N, N), got W {W.shape} and cov {cov.shape}")
    return np.einsum("ki,ij,kj->k", W, cov, W)


def spread_probability(s1sq: ArrayLike, s0sq: ArrayLike) -> np.ndarray:
    r"""Return :math:`P(|Z_1|>|Z_0|)=\tfrac2\pi\arctan(\sigma_1/\sigma_0)` for independent centred Gaussians.

    Parameters
    ----------
    s1sq, s0sq : ArrayLike
        The variances :math:`\sigma_1^2, \sigma_0^2` (>= 0, not both 0); broadcast.

    Returns
    -------
    np.ndarray
        float64 in [0, 1].
    """
    s1, s0 = _var("s1sq", s1sq), _var("s0sq", s0sq)
    if np.any((s1 == 0) & (s0 == 0)):
        raise ValueError("s1sq and s0sq must not both be 0 (the probability is undefined: both variables are 0)")
    return 2.0 / math.pi * np.arctan2(np.sqrt(s1), np.sqrt(s0))


def rayleigh_optimum(cov0: ArrayLike, cov1: ArrayLike) -> tuple[float, np.ndarray]:
    r"""Return (ratio, w): the maximum of :math:`w^\top\Sigma_1w/w^\top\Sigma_0w` and a unit-norm maximiser.

    The generalised eigenproblem :math:`\Sigma_1w=\lambda\Sigma_0w` (``cov0`` positive definite).
    By :func:`spread_probability`, ``w`` maximises :math:`P(|\langle w,X_1\rangle|>|\langle w,X_0\rangle|)`
    on Gaussian classes.

    Parameters
    ----------
    cov0 : ArrayLike
        (N, N) positive-definite covariance Σ₀.
    cov1 : ArrayLike
        (N, N) covariance Σ₁.

    Returns
    -------
    tuple[float, np.ndarray]
        The largest ratio and a unit-norm (N,) maximiser.
    """
    cov0, cov1 = v.covariance_pair(("cov0", "cov1"), cov0, cov1)
    if np.linalg.eigvalsh(cov0)[0] <= 1e-12 * np.abs(cov0).max():
        raise ValueError("cov0 must be positive definite (smallest eigenvalue > 1e-12 * max |entry|)")
    vals, vecs = scipy.linalg.eigh(cov1, cov0)
    w = vecs[:, -1]
    return float(vals[-1]), w / np.linalg.norm(w)


def erf_start_loss(s1sq: ArrayLike, s0sq: ArrayLike) -> np.ndarray:
    r"""Return :math:`4\mathcal L` of one erf(·/√2) neuron at :math:`b=0` (notes 004 Eq. (19)).

    Labels ±1, Gaussian classes:

    :math:`2+\tfrac2\pi\bigl[\arcsin\frac{\sigma_1^2}{1+\sigma_1^2}+\arcsin\frac{\sigma_0^2}{1+\sigma_0^2}\bigr]`
    (the cross terms vanish because σ is odd); tends to 2 as the weights shrink.

    Parameters
    ----------
    s1sq, s0sq : ArrayLike
        :math:`\sigma_1^2=w^\top\Sigma_1w` and :math:`\sigma_0^2=w^\top\Sigma_0w` (>= 0); broadcast.

    Returns
    -------
    np.ndarray
        float64, the broadcast shape.
    """
    s1, s0 = _var("s1sq", s1sq), _var("s0sq", s0sq)
    return 2.0 + 2.0 / math.pi * (np.arcsin(s1 / (1 + s1)) + np.arcsin(s0 / (1 + s0)))


def relu_start_loss(s1sq: ArrayLike, s0sq: ArrayLike) -> np.ndarray:
    r"""Return :math:`4\mathcal L` of one ReLU neuron (notes 004 Eq. (26)).

    Labels 0/1, centred Gaussian classes:

    :math:`1-\sqrt{2/\pi}\,\sigma_1+\tfrac12(\sigma_1^2+\sigma_0^2)`; tends to 1 as the weights shrink.

    Parameters
    ----------
    s1sq, s0sq : ArrayLike
        :math:`\sigma_1^2=w^\top\Sigma_1w` and :math:`\sigma_0^2=w^\top\Sigma_0w` (>= 0); broadcast.

    Returns
    -------
    np.ndarray
        float64, the broadcast shape.
    """
    s1, s0 = _var("s1sq", s1sq), _var("s0sq", s0sq)
    return 1.0 - math.sqrt(2.0 / math.pi) * np.sqrt(s1) + 0.5 * (s1 + s0)
