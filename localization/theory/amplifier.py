r"""The localization amplifier :math:`\varphi` (paper Eq. (6), Lemma 3.1; Lemma B.1, App. C.3).

For a scalar marginal law :math:`X` (one coordinate of the class-1 data, :math:`X_1 \mid Y=1`),

.. math::

    \varphi(a) = \mathbb E\bigl[X\,\operatorname{erf}\bigl(X\,\mathrm{alg}^{-1}(a)/\sqrt2\bigr)\bigr],

    \mathrm{alg}^{-1}(a) = \frac{a}{\sqrt{1-a^2}},\quad a\in(-1,1).

Facts used below (each derived with SymPy and checked in ``tests/test_amplifier.py``):

* Gaussian :math:`X\sim\mathcal N(0,\sigma^2)`: Stein's lemma gives
  :math:`\mathbb E[X\operatorname{erf}(cX/\sqrt2)] = \sigma^2\mathbb E[\tfrac{d}{dX}\operatorname{erf}(cX/\sqrt2)]
  = \sqrt{2/\pi}\,\sigma^2 c/\sqrt{1+c^2\sigma^2}`, hence
  :math:`\varphi(a) = \sqrt{2/\pi}\,\sigma^2 a/\sqrt{1+(\sigma^2-1)a^2}` — exactly linear,
  :math:`\sqrt{2/\pi}\,a`, for unit variance.
* Two atoms :math:`X=\pm s` with probability ½ each: :math:`\varphi(a) = s\,\operatorname{erf}(s\,a/\sqrt{2(1-a^2)})`.
* :math:`\varphi` is odd; :math:`\varphi'(0)=\sqrt{2/\pi}\,\mathbb E[X^2]`,
  :math:`\varphi'''(0)=\sqrt{2/\pi}\,(3\mathbb E[X^2]-\mathbb E[X^4])` (needs :math:`\mathbb E[X^4]<\infty`).
* As :math:`a\to\pm1`, :math:`\mathrm{alg}^{-1}(a)\to\pm\infty` and :math:`\varphi(a)\to\pm\mathbb E|X|`.

Domain policy
-------------
The mathematical domain is the open interval :math:`(-1,1)`; :math:`\varphi` extends continuously to
:math:`[-1,1]` with :math:`\varphi(\pm1)=\pm\mathbb E|X|`. The endpoint is reached exactly by the
effective flow when :math:`w\propto e_i` (equality in Cauchy–Schwarz), so both entry points accept the
closed interval:

* :meth:`Amplifier.__call__` (public) validates *concrete* inputs: a ``ValueError`` naming ``a`` is
  raised for non-finite entries or :math:`|a|>1`. Traced inputs (inside ``jit``/``grad``/``vmap``)
  cannot be checked and follow the core policy.
* :meth:`Amplifier.core` (no checks, jit-safe): :math:`|a|<1` exact formula; :math:`|a|=1` the limit
  :math:`\pm\mathbb E|X|`; :math:`|a|>1` or NaN input gives NaN. No ``inf*0`` is ever formed: the
  argument of alg⁻¹ is replaced by 0 outside the open interval before dividing (double-``where``), so
  gradients are finite for every :math:`|a|<1` (derivatives exactly at :math:`|a|=1` are not
  supported and come out as 0 from the constant branch).

Everything is float64: :func:`amplifier_of` needs JAX's 64-bit mode (``localization.enable_float64()``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol, runtime_checkable

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike

from localization import validation as v
from localization.data.marginals import GaussianMarginal, Marginal
from localization.pytree import pytree_dataclass, static_field

__all__ = [
    "PytreeAmplifier",
    "Amplifier",
    "AmplifierDerivatives",
    "CubicTaylor",
    "amplifier_of",
    "amplifier_taylor",
    "amplifier_derivatives_at_zero",
    "alg_inv",
    "evaluate_amplifier",
    "pad_quadrature",
]

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


@runtime_checkable
class PytreeAmplifier(Protocol):
    """What the flow integrators and :func:`evaluate_amplifier` need of an amplifier to pass ``jit``.

    A pytree (registered with :func:`localization.pytree.pytree_dataclass`) with an unvalidated,
    jit-safe ``core(a)``.

    :class:`Amplifier`, :class:`CubicTaylor` and :class:`localization.theory.TabulatedAmplifier`
    satisfy it; any other callable of ``a`` is still accepted where an amplifier is expected and is
    called as a plain function (``isinstance(phi, PytreeAmplifier)`` tells the two apart).
    """

    def core(self, a: jax.Array) -> jax.Array:
        """Return φ(a) without validation (jit-safe); ``a`` any shape in [-1, 1]."""
        ...

    def __call__(self, a: ArrayLike) -> jax.Array:
        """Return φ(a) after checking ``a`` (finite, in [-1, 1]); the shape of ``a``."""
        ...


def alg_inv(a: ArrayLike) -> jax.Array:
    r"""Return the inverse algebraic sigmoid :math:`\mathrm{alg}^{-1}(a)=a/\sqrt{1-a^2}` (paper, below Eq. (6)).

    Computed as ``a / sqrt((1-a)(1+a))`` (no cancellation near :math:`|a|=1`). Returns ±inf at
    :math:`a=\pm1` and NaN for :math:`|a|>1`. Vectorised, jit-safe, no validation.

    Parameters
    ----------
    a : ArrayLike
        Points, any shape.

    Returns
    -------
    jax.Array
        float64, the shape of ``a``.
    """
    a = v.float64("a", a)
    return a / jnp.sqrt((1.0 - a) * (1.0 + a))


def _check_a(a):
    """Validate a concrete input of φ: finite, |a| <= 1. Traced inputs pass through unchanged."""
    if isinstance(a, jax.core.Tracer):
        return v.float64("a", a)
    arr = v.finite_real_array("a", a, valid="-1 <= a <= 1")
    worst = float(np.max(np.abs(arr))) if arr.size else 0.0
    if worst > 1.0:
        raise ValueError(
            f"a must lie in [-1, 1] (phi is defined on (-1, 1) and extended by continuity to ±1), "
            f"got an entry with |a| = {worst!r}"
        )
    return jnp.asarray(arr)


def _safe_c(a):
    """alg⁻¹(a) on the open interval, 0 elsewhere (so no inf or NaN reaches erf or its derivative)."""
    inside = jnp.abs(a) < 1.0
    a_safe = jnp.where(inside, a, 0.0)
    return inside, a_safe / jnp.sqrt((1.0 - a_safe) * (1.0 + a_safe))


@pytree_dataclass(eq=False)
class Amplifier:
    r"""The amplifier :math:`\varphi` of one marginal law (paper Eq. (6)); call it like a function.

    Build it with :func:`amplifier_of` (from a ``localization.data`` marginal) or with the constructors
    :meth:`gaussian`, :meth:`binary`, :meth:`from_quadrature`.

    ``kind`` (static) is one of

    * ``"gaussian"``: closed form :math:`\sqrt{2/\pi}\,\sigma^2 a/\sqrt{1+(\sigma^2-1)a^2}`,
      ``params = (variance,)``;
    * ``"binary"``: closed form :math:`s\,\operatorname{erf}(s\,\mathrm{alg}^{-1}(a)/\sqrt2)` for
      :math:`X=\pm s`, ``params = (s,)``;
    * ``"quadrature"``: :math:`\sum_k w_k x_k \operatorname{erf}(x_k\,\mathrm{alg}^{-1}(a)/\sqrt2)`,
      ``params = (nodes, weights)`` (1-D float64 arrays, weights summing to 1).

    It is a pytree (``params`` are leaves, ``kind`` is static), so it can be passed through ``jit`` and
    ``vmap`` (e.g. a stack of quadrature amplifiers of equal size over a gain sweep).

    Shapes: ``a`` of any shape → φ(a) of the same shape (float64).
    """

    kind: str = static_field()
    params: tuple = ()
    abs_mean: Any = None  # E|X|, the limit φ(1) (leaf)

    # -- constructors ------------------------------------------------------------------------------
    @classmethod
    def gaussian(cls, variance: float = 1.0) -> Amplifier:
        r"""Return the closed-form φ for :math:`X\sim\mathcal N(0,\sigma^2)`, ``variance`` = σ² > 0."""
        var = v.positive("variance", variance)
        return cls("gaussian", (jnp.asarray(var, jnp.float64),), jnp.asarray(math.sqrt(2 * var / math.pi)))

    @classmethod
    def binary(cls, scale: float = 1.0) -> Amplifier:
        r"""Return the closed-form φ for the symmetric two-atom law :math:`X=\pm s` (``scale`` = s > 0)."""
        s = v.positive("scale", scale)
        return cls("binary", (jnp.asarray(s, jnp.float64),), jnp.asarray(s, jnp.float64))

    @classmethod
    def from_quadrature(cls, nodes: ArrayLike, weights: ArrayLike) -> Amplifier:
        r"""Return φ by a fixed quadrature rule :math:`\mathbb E f(X)\approx\sum_k w_k f(x_k)`.

        ``nodes``, ``weights``: 1-D arrays of equal length, finite, weights ≥ 0 summing to 1 (±1e-3: a
        low-order rule is allowed; the check catches unnormalised weights).
        """
        nodes = np.asarray(v.float_array("nodes", nodes), dtype=np.float64)
        weights = np.asarray(v.float_array("weights", weights), dtype=np.float64)
        if nodes.ndim != 1:
            raise ValueError(f"nodes must be a 1-D array, got shape {nodes.shape}")
        if weights.shape != nodes.shape:
            raise ValueError(f"weights must have the shape of nodes {nodes.shape}, got {weights.shape}")
        if not (np.all(np.isfinite(nodes)) and np.all(np.isfinite(weights))):
            raise ValueError("nodes and weights must be finite")
        if np.any(weights < 0):
            raise ValueError(f"weights must be non-negative, got min {weights.min()!r}")
        total = float(weights.sum())
        if abs(total - 1.0) > 1e-3:
            raise ValueError(f"weights must sum to 1 (a probability law), got sum {total!r}")
        # drop nodes that cannot matter to 1e-20 (tanh-sinh tails): the integrand of φ is bounded by
        # w|x| and that of φ''' at 0 by ~w x^4
        keep = weights * np.maximum(np.abs(nodes), nodes**4) > 1e-20
        nodes, weights = nodes[keep], weights[keep]
        return cls(
            "quadrature",
            # device_put, not jnp.asarray: the same arrays without a compiled copy per rule size
            (jax.device_put(nodes), jax.device_put(weights)),
            jnp.asarray(float(np.sum(weights * np.abs(nodes)))),
        )

    # -- evaluation --------------------------------------------------------------------------------
    def core(self, a: ArrayLike) -> jax.Array:
        """φ(a) without validation (jit-safe); see the module's domain policy. Any shape."""
        a = v.float64("a", a)
        if self.kind == "gaussian":
            (var,) = self.params
            inside = jnp.abs(a) <= 1.0
            a_safe = jnp.where(inside, a, 0.0)
            val = _SQRT_2_OVER_PI * var * a_safe / jnp.sqrt(1.0 + (var - 1.0) * a_safe**2)
            return jnp.where(inside, val, jnp.nan)
        inside, c = _safe_c(a)
        if self.kind == "binary":
            (s,) = self.params
            val = s * jax.scipy.special.erf(s * c / math.sqrt(2.0))
        elif self.kind == "quadrature":
            nodes, weights = self.params
            arg = c[..., None] * (nodes / math.sqrt(2.0))
            val = jnp.sum(jax.scipy.special.erf(arg) * (weights * nodes), axis=-1)
        else:  # pragma: no cover - guarded by constructors
            raise ValueError(f"unknown amplifier kind {self.kind!r}")
        edge = jnp.where(jnp.abs(a) == 1.0, jnp.sign(a) * self.abs_mean, jnp.nan)
        return jnp.where(inside, val, edge)

    def __call__(self, a: ArrayLike) -> jax.Array:
        """φ(a) for ``a`` of any shape in [-1, 1]; concrete inputs are validated (``ValueError``)."""
        return self.core(_check_a(a))

    @property
    def limit(self) -> jax.Array:
        """φ(1) = E|X| (the limit as a → 1)."""
        return self.abs_mean


def _check_marginal(marginal):
    if not isinstance(marginal, Marginal):
        raise TypeError(
            f"marginal must be a localization.data marginal (a data.Marginal, e.g. model.marginal), "
            f"got {type(marginal).__name__}"
        )


def _two_atom_scale(nodes, weights):
    """Return s if the rule is exactly the symmetric two-atom law ±s (after dropping zero weights)."""
    keep = weights > 0
    x, p = nodes[keep], weights[keep]
    if x.size != 2:
        return None
    s = float(np.max(np.abs(x)))
    if s > 0 and np.allclose(np.sort(x), [-s, s], rtol=1e-14, atol=0) and np.allclose(p, 0.5, atol=1e-14):
        return s
    return None


def amplifier_of(marginal: Marginal, *, method: str = "auto", order: int | None = None) -> Amplifier:
    r"""Return the amplifier :math:`\varphi` of ``marginal`` (paper Eq. (6)).

    Parameters
    ----------
    marginal
        A ``localization.data`` marginal (the law of one coordinate of the class-1 data): needs
        ``.variance``, ``.quadrature(order)`` and ``.is_discrete``.
    method
        ``"auto"`` (closed form when one exists — Gaussian marginals, symmetric two-atom laws such as
        the Ising ±1 marginal — otherwise quadrature), ``"closed_form"`` (error if none exists) or
        ``"quadrature"`` (always use ``marginal.quadrature(order)``; used to cross-check the closed
        forms). Never Monte Carlo.
    order
        Passed to ``marginal.quadrature`` (ignored by closed forms and by the discrete laws with few
        atoms, whose rule is exact; an empirical marginal of many values uses it as its number of
        equal-count bins, :class:`localization.data.EmpiricalMarginal`). ``None`` = the marginal's
        default (160 tanh-sinh nodes per panel: ~1e-12 absolute for all a in [-1, 1] on NLGP, Kur,
        Gaussian; ~700–1800 nodes). Order 64 gives ~1e-8 with 2.5×
        fewer nodes, for long effective-flow integrations.

    Returns
    -------
    Amplifier
        Callable φ: any-shape ``a`` in [-1, 1] → same-shape float64; differentiable any number of
        times with ``jax.grad`` on (-1, 1). See the module docstring for the domain policy.
    """
    _check_marginal(marginal)
    v.require_float64("amplifier", np.float64)  # phi is float64 throughout (localization.enable_float64)
    if method not in ("auto", "closed_form", "quadrature"):
        raise ValueError(f"method must be one of 'auto', 'closed_form', 'quadrature', got {method!r}")
    if order is not None:
        order = v.integer("order", order, minimum=1)
    if method != "quadrature" and isinstance(marginal, GaussianMarginal):
        return Amplifier.gaussian(float(marginal.variance))
    nodes, weights = marginal.quadrature(order)
    nodes = np.asarray(nodes, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    if method != "quadrature" and marginal.is_discrete:
        s = _two_atom_scale(nodes, weights)
        if s is not None:
            return Amplifier.binary(s)
    if method == "closed_form":
        raise ValueError(
            f"method='closed_form': no closed form of phi is known for {type(marginal).__name__}; "
            f"closed forms exist for Gaussian and symmetric two-atom (±s) marginals"
        )
    return Amplifier.from_quadrature(nodes, weights)


class AmplifierDerivatives(NamedTuple):
    """φ'(0) and φ'''(0) (paper Lemma B.1, corrected; see :func:`amplifier_derivatives_at_zero`)."""

    first: float
    third: float


def amplifier_derivatives_at_zero(marginal: Marginal) -> AmplifierDerivatives:
    r"""Return the exact derivatives :math:`\varphi'(0)` and :math:`\varphi'''(0)` from the marginal's moments.

    :math:`\varphi'(0)=\sqrt{2/\pi}\,\mathbb E[X^2]` and
    :math:`\varphi'''(0)=\sqrt{2/\pi}\,(3\mathbb E[X^2]-\mathbb E[X^4])`.

    Derivation (SymPy, ``tests/test_amplifier.py``): expanding the integrand of Eq. (6) in ``a``,
    :math:`X\operatorname{erf}(X\mathrm{alg}^{-1}(a)/\sqrt2)=\sqrt{2/\pi}\,[X^2a+X^2(3-X^2)a^3/6]+O(a^5)`.
    With :math:`\kappa=\mathbb E[X^4]/\sigma^4` this is :math:`\sqrt{2/\pi}(3\sigma^2-\kappa\sigma^4)`
    (the paper's Lemma B.1 prints ":math:`\kappa^4\sigma^4`" — a typo). For unit variance the cubic
    coefficient is positive (super-linear φ) iff the excess kurtosis :math:`\kappa-3` is *negative*.

    When :math:`\mathbb E[X^4]=\infty` (e.g. Kur(k) with k ≤ 4) the third derivative at 0 does not
    exist as a finite number (:math:`\varphi''(a)/a\to-\infty`); ``third`` is then ``-inf``.

    Parameters
    ----------
    marginal : Marginal
        A ``localization.data`` marginal.

    Returns
    -------
    AmplifierDerivatives
        ``first`` = φ'(0) and ``third`` = φ'''(0) (``-inf`` when E[X^4] diverges).
    """
    _check_marginal(marginal)
    var = float(marginal.variance)
    m4 = float(marginal.fourth_moment)
    first = _SQRT_2_OVER_PI * var
    third = -math.inf if math.isinf(m4) else _SQRT_2_OVER_PI * (3.0 * var - m4)
    return AmplifierDerivatives(first, third)


@pytree_dataclass(eq=False)
class CubicTaylor:
    r"""Third-order Taylor polynomial of φ at 0: :math:`\varphi'(0)\,a+\varphi'''(0)\,a^3/6`.

    Callable on any-shape ``a`` (concrete inputs validated to lie in [-1, 1]); pytree with leaves
    ``first``, ``third``.
    """

    first: Any
    third: Any

    def core(self, a: ArrayLike) -> jax.Array:
        """Return the cubic φ'(0) a + φ'''(0) a³/6 without validation (jit-safe)."""
        a = v.float64("a", a)
        return self.first * a + self.third * a**3 / 6.0

    def __call__(self, a: ArrayLike) -> jax.Array:
        """Return the cubic at ``a`` after checking it (finite, in [-1, 1])."""
        return self.core(_check_a(a))


def amplifier_taylor(marginal: Marginal) -> CubicTaylor:
    r"""Return the cubic Taylor approximation of φ about 0 (paper §3.2, App. B.1; coefficients corrected).

    Raises ``ValueError`` (naming ``marginal``) when the fourth moment of the marginal diverges, since
    then φ'''(0) is not finite and no cubic Taylor polynomial exists.

    Parameters
    ----------
    marginal : Marginal
        A ``localization.data`` marginal with a finite fourth moment.

    Returns
    -------
    CubicTaylor
        φ'(0) a + φ'''(0) a³/6 (:func:`amplifier_derivatives_at_zero`).
    """
    d = amplifier_derivatives_at_zero(marginal)
    if not math.isfinite(d.third):
        raise ValueError(
            f"marginal {marginal!r} has a divergent fourth moment (E[X^4] = inf), so phi'''(0) is not "
            f"finite and the cubic Taylor approximation of phi does not exist"
        )
    return CubicTaylor(jnp.asarray(d.first, jnp.float64), jnp.asarray(d.third, jnp.float64))


# -------------------------------------------------------------------------------------------------
# evaluation at concrete points
# -------------------------------------------------------------------------------------------------
_PAD = 1024  # quadrature rules are padded to a multiple of this many nodes before evaluation
_POINTS = 16  # the smallest number of points evaluate_amplifier evaluates (then 64, 256, ...)


def pad_quadrature(phi: PytreeAmplifier | Callable) -> PytreeAmplifier | Callable:
    """Return φ with its quadrature rule padded by zero nodes of zero weight to a multiple of 1024 nodes.

    Exact: a node at 0 adds ``erf(0) · 0 · 0 = 0`` to the sum of Eq. (6), and nothing to its
    derivatives. Amplifiers of different marginals (a gain or k sweep: 650–1900 nodes) then have
    the same shapes, so a ``jit``-compiled function of φ (:func:`evaluate_amplifier`, a ``jax.grad``
    of ``phi.core``) compiles once for all of them instead of once per marginal.

    Parameters
    ----------
    phi : PytreeAmplifier or Callable
        The amplifier; anything but a quadrature :class:`Amplifier` is returned unchanged.

    Returns
    -------
    PytreeAmplifier or Callable
        φ, with (1024 m,) nodes and weights when it is a quadrature amplifier.
    """
    if not (isinstance(phi, Amplifier) and phi.kind == "quadrature"):
        return phi
    nodes, weights = (np.asarray(p, dtype=np.float64) for p in phi.params)
    extra = -nodes.size % _PAD
    if extra == 0:
        return phi
    pad = np.zeros(extra)
    return dataclasses.replace(
        phi, params=(jax.device_put(np.concatenate([nodes, pad])), jax.device_put(np.concatenate([weights, pad])))
    )


@jax.jit
def _evaluate_core(phi, a):
    return phi.core(a)


def evaluate_amplifier(phi: PytreeAmplifier | Callable, a: ArrayLike) -> np.ndarray:
    r"""Return φ(a) at concrete points ``a`` (any shape, finite, in [-1, 1]; checked) as float64 NumPy.

    The same values as ``phi(a)``, computed in one compiled call. Calling a quadrature amplifier
    eagerly runs a chain of array operations that JAX compiles one by one for every new shape (the
    number of quadrature nodes differs between marginals), which dominates the cost of evaluating φ
    for many marginals. Here a :class:`PytreeAmplifier` (``Amplifier``, ``CubicTaylor``,
    ``TabulatedAmplifier``) goes through one ``jit``-compiled evaluation, compiled once per
    amplifier kind, number of points (rounded up to 16, 64, 256, ... by padding with zeros) and
    quadrature size (rules padded to a multiple of 1024 nodes with zero-weight nodes, which is
    exact); other callables are called directly.

    Parameters
    ----------
    phi : PytreeAmplifier or Callable
        The amplifier.
    a : ArrayLike
        Points in [-1, 1], any shape.

    Returns
    -------
    np.ndarray
        φ(a), float64, the shape of ``a``.
    """
    if not callable(phi):
        raise TypeError(f"phi must be callable, got {type(phi).__name__}")
    a = np.asarray(a)
    if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
        raise TypeError(f"a must be a real number or array, got dtype {a.dtype}")
    a = a.astype(np.float64)
    if not np.all(np.isfinite(a)) or np.any(np.abs(a) > 1):
        raise ValueError("a must be finite and lie in [-1, 1]")
    if not isinstance(phi, PytreeAmplifier):
        return np.asarray(phi(jnp.asarray(a)), dtype=np.float64)
    # φ acts point by point: the points are evaluated as one flat vector padded with zeros to a size
    # in 16, 64, 256, ..., so calls with points of many shapes share a few compiled programs.
    flat = a.ravel()
    size = _POINTS
    while size < flat.size:
        size *= 4
    padded = jnp.asarray(np.concatenate([flat, np.zeros(size - flat.size)]))
    try:
        out = _evaluate_core(pad_quadrature(phi), padded)
    except TypeError:  # not a pytree of arrays: evaluate directly
        out = phi.core(padded)
    return np.asarray(out, dtype=np.float64)[: flat.size].reshape(a.shape)
