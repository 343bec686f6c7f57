"""The paper's own samplers, reproduced from its public code (for comparison, not for use).

Reproductions of two samplers of the code behind the paper's figures (repository
``leonlufkin/Localization`` at commit 5ebb565265d429f60e33e220391007144cf0b490), so the book can
measure what they change. They are *not* the book's samplers: :class:`localization.data.Kur` and
:class:`localization.data.Ising` draw the exact laws.

**Kur (``AlgQDF``).** ``localization/datasets/qdfs.py`` L46-58 defines the quantile
``q(p) = (2p - 1) / (1 - |2p - 1|**k)**(1/k)`` and divides it by a Monte Carlo standard deviation:
the ``jnp.std`` of ``q`` at 10**6 uniforms drawn with ``jax.random.PRNGKey(42)`` (L52-54, printed at
L55). ``localization/datasets/norta.py`` L14 and L55-63 apply it to ``p = (1 + erf(z/sqrt 2))/2``,
``z`` the latent Gaussian, and L82-87 then apply ``x -> ((x*1 + 1) * 2)/2 - 1`` (the ``adjust``
step with the default support (-1, 1), an identity up to rounding). :func:`paper_kur_map` evaluates
exactly these operations in a chosen precision; :func:`paper_kur_normaliser` recomputes the Monte
Carlo standard deviation with the same key and generator (threefry, non-partitionable). In float64 it
reproduces the standard deviations printed in the paper's notebooks to the last digit or one unit
of the last place (``figures/fig5.ipynb`` prints 1.007363924323071 for k = 3, 0.7745461679507035 for
k = 4, 0.580435177819239 for k = 30; ``figures/fig2.ipynb`` 0.6950598719782084 for k = 5), which
shows those notebooks ran with 64-bit JAX. In float32 (JAX's default) it does not reproduce them.

In float32, ``erf(z/sqrt 2)`` rounds ``p`` to exactly 0 or 1 for ``|z|`` beyond about 5.2, where
``1 - |2p - 1|**k = 0`` and the map returns ``±inf`` (:func:`paper_kur_overflow`); the code has no
clipping, and its training loop no finiteness check (one infinite input turns the weights to NaN).
:class:`PaperKur` therefore either raises on non-finite samples (``nonfinite="raise"``, the default,
for eager calls) or returns them as the code would (``nonfinite="keep"``), for callers that count
them (:func:`count_nonfinite`); under ``jit`` only ``"keep"`` is allowed.

**Ising (``IsingDataset``).** ``localization/datasets/ising.py`` L11-85: every example is the last
state of its own single-spin Metropolis chain from uniform ±1 spins (L60-61), no burn-in,
``num_steps`` proposals (1000 by default, L106; ``figures/fig2.ipynb`` cell 4 keeps the default). A
proposal flips a uniform site (L39-40) and is accepted when a uniform is below
``min(1, pi(x')/pi(x))`` with ``pi(x) = exp(J sum_i x_i x_{i-1})`` evaluated as a full energy
(L11-29, L42-45, L57). :func:`paper_metropolis_ising` evaluates that ratio in the chosen precision,
jitted as the code does (L124-129). Evaluated one operation at a time in float32, both weights would
overflow once ``J sum_i x_i x_{i-1} > 88.72`` (at ``J = 1.2``, ``N = 100``: 13 or fewer domain walls)
and the ratio ``inf/inf = nan`` would freeze the chain; under ``jit`` XLA's simplifier rewrites
``exp(a)/exp(b)`` to ``exp(a - b)`` and the float32 chain moves as the float64 one does (tested in
``tests/test_paper_samplers.py``). Both are the Metropolis chain of
:func:`localization.data.metropolis_ising`, up to rounding.
"""

from __future__ import annotations

import functools
import math
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike, DTypeLike

from localization import validation as v
from localization.data.base import DataModel, concrete, family_parameter, is_traced
from localization.data.copula import CopulaModel
from localization.data.marginals import KurMarginal, RademacherMarginal
from localization.pytree import pytree_dataclass, static_field

__all__ = [
    "PAPER_CODE",
    "PRECISIONS",
    "NONFINITE",
    "paper_kur_normaliser",
    "paper_kur_map",
    "paper_kur_overflow",
    "count_nonfinite",
    "PaperKur",
    "paper_metropolis_ising",
    "PaperIsing",
]

#: Repository and commit of the reproduced code.
PAPER_CODE = "leonlufkin/Localization@5ebb565265d429f60e33e220391007144cf0b490"
#: Precisions of the reproductions: the code's float32 default and the float64 its notebooks ran in.
PRECISIONS = ("float32", "float64")
#: Policies for the non-finite samples of :class:`PaperKur`.
NONFINITE = ("raise", "keep")


def _precision(name: str, value: Any) -> np.dtype:
    if value not in PRECISIONS:
        raise ValueError(f"{name} must be one of {PRECISIONS}, got {value!r}")
    if value == "float64":
        v.require_float64(name, jnp.float64)
    return np.dtype(value)


def _alg_quantile(p: jax.Array, k: Any) -> jax.Array:
    """Return the code's ``alg_qdf`` (qdfs.py L49) at ``p``, in ``p``'s dtype.

    An integer-valued concrete ``k`` is raised as a Python int (``integer_pow``, as the code's
    ``AlgQDF(4)`` does); other values as a float power.
    """
    s = 2 * p - 1
    if not is_traced(k) and float(k).is_integer():
        kk = int(float(k))
        return s / (1 - jnp.abs(s) ** kk) ** (1 / kk)
    k = jnp.asarray(k, p.dtype)
    return s / (1 - jnp.abs(s) ** k) ** (1 / k)


@functools.lru_cache(maxsize=64)
def _normaliser(k: float, precision: str) -> float:
    with jax.threefry_partitionable(False):
        p = jax.random.uniform(jax.random.PRNGKey(42), (1_000_000,), dtype=precision)
    return float(jnp.std(_alg_quantile(p, k)))


def paper_kur_normaliser(k: float, precision: str = "float64") -> float:
    """Return the code's Monte Carlo standard deviation of ``AlgQDF(k)`` (qdfs.py L52-54).

    ``jnp.std`` of the quantile at 10**6 uniforms of ``jax.random.PRNGKey(42)`` (threefry with
    ``jax_threefry_partitionable`` off, the generator of the code's JAX versions), in ``precision``.

    Parameters
    ----------
    k : float
        Kur exponent, > 2 (the code accepts any k; its standard deviation is infinite for k <= 2).
    precision : str
        ``"float64"`` (the paper's notebooks) or ``"float32"``.

    Returns
    -------
    float
        The standard deviation the code divides by (float64 value of the ``precision`` result).
    """
    k = v.kur_exponent("k", k)
    _precision("precision", precision)
    return _normaliser(k, precision)


def paper_kur_map(z: ArrayLike, k: ArrayLike, normaliser: ArrayLike) -> jax.Array:
    """Apply the code's Kur map to latent normals ``z``, in ``z``'s dtype (norta.py L14, L62, L82-87).

    ``p = 0.5 (1 + erf(z / sqrt 2))``, ``x = q(p) / normaliser`` with ``q`` the ``AlgQDF`` quantile,
    then the ``adjust`` step ``((x*1 + 1) * 2)/2 - 1``. Non-finite where ``2p - 1`` rounds to ±1.

    Parameters
    ----------
    z : ArrayLike
        Latent standard normals (any shape, float32 or float64).
    k : ArrayLike
        Kur exponent (traceable).
    normaliser : ArrayLike
        The divisor, :func:`paper_kur_normaliser` (traceable).

    Returns
    -------
    jax.Array
        The code's samples, the shape and dtype of ``z``.
    """
    z = jnp.asarray(z)
    if not jnp.issubdtype(z.dtype, jnp.floating):
        raise TypeError(f"z must be a floating array, got dtype {z.dtype}")
    dt = z.dtype
    p = 0.5 * (1 + jax.lax.erf(z / jnp.sqrt(jnp.asarray(2.0, dt))))
    x = _alg_quantile(p, k) / jnp.asarray(normaliser, dt)
    one = jnp.asarray(1.0, dt)
    return (x * one + one) * jnp.asarray(2.0, dt) / jnp.asarray(2.0, dt) + jnp.asarray(-1.0, dt)


def paper_kur_overflow(k: float = 5.0, precision: str = "float32") -> dict[str, float]:
    """Locate the non-finite outputs of the jitted :func:`paper_kur_map` on every float 4 <= ``|z|`` <= 9.

    Every representable ``z`` of ``precision`` in [4, 9] (and its negative) is mapped (for float64, a
    grid of 2**22 points). The map is not monotone in finiteness near the threshold (float32 ``erf``
    rounds ``p`` to 1 on some points and not on their neighbours), so both ends are returned.

    Parameters
    ----------
    k : float
        Kur exponent, > 2 (the location does not depend on it: only ``p`` rounding to 0 or 1 matters).
    precision : str
        ``"float32"`` or ``"float64"``.

    Returns
    -------
    dict[str, float]
        ``first`` (smallest ``|z|`` with a non-finite output), ``last_finite`` (largest ``|z|`` with a
        finite one), for ``z > 0`` and ``z < 0`` (keys ``pos_``/``neg_``), and ``probability``: the
        probability that one standard normal entry maps to a non-finite value (float64 integral over
        the scanned points plus the tails beyond 9).
    """
    k = v.kur_exponent("k", k)
    _precision("precision", precision)
    return dict(_overflow(k, precision))


@functools.lru_cache(maxsize=16)
def _overflow(k: float, precision: str) -> tuple[tuple[str, float], ...]:
    from scipy.special import ndtr

    dt = np.dtype(precision)
    if dt == np.float32:
        lo, hi = np.float32(4.0).view(np.int32), np.float32(9.0).view(np.int32)
        zs = np.arange(lo, hi + 1, dtype=np.int32).view(np.float32)
    else:
        zs = np.linspace(4.0, 9.0, 2**22 + 1)
    f = jax.jit(paper_kur_map, static_argnums=1)
    out: dict[str, float] = {}
    prob = 2 * float(ndtr(-9.0))
    z64 = zs.astype(np.float64)
    dens = np.exp(-0.5 * z64**2) / math.sqrt(2 * math.pi)
    width = np.diff(z64, append=z64[-1])
    for sign, tag in ((1, "pos"), (-1, "neg")):
        q = np.asarray(f(jnp.asarray(sign * zs), k, 1.0))
        bad = ~np.isfinite(q)
        out[f"{tag}_first"] = float(zs[np.argmax(bad)]) if bad.any() else math.inf
        out[f"{tag}_last_finite"] = float(zs[len(bad) - 1 - np.argmax(~bad[::-1])])
        prob += float(np.sum(dens * width * bad))
    out["probability"] = prob
    return tuple(out.items())


def count_nonfinite(x: ArrayLike) -> int:
    """Return the number of non-finite entries of ``x`` (concrete arrays only)."""
    if is_traced(x):
        raise TypeError("x must be concrete (count non-finite entries outside jit)")
    return int(np.sum(~np.isfinite(np.asarray(x))))


@pytree_dataclass
class PaperKur(CopulaModel):
    """The paper code's Kur(k) sampler (``NortaDataset`` with ``AlgQDF(k)``): a reproduction, not a sampler.

    The latent Gaussian is the book's (``spectral``, same law as the code's); the marginal map is the
    code's (:func:`paper_kur_map`, divided by :func:`paper_kur_normaliser`) evaluated in ``precision``
    and cast back to the requested dtype. ``marginal`` and ``covariance`` are those of the intended law
    Kur(k) (:class:`localization.data.Kur`): the reproduction differs from it by the factor
    ``𝒵_k / normaliser`` and, in float32, by its non-finite samples.

    ``nonfinite="raise"`` (default): an eager call that produces a non-finite sample raises
    ``ValueError`` with their count; under ``jit`` it raises ``TypeError`` (the samples cannot be
    inspected there). ``nonfinite="keep"``: return ``±inf`` as the code does (count them with
    :func:`count_nonfinite`). ``normaliser`` defaults to the code's value for ``k``.
    """

    xi: float = static_field()
    k: float
    precision: str = static_field(default="float32")
    nonfinite: str = static_field(default="raise")
    normaliser: Any = None

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "k", family_parameter("k", self.k, v.kur_exponent))
        _precision("precision", self.precision)
        if self.nonfinite not in NONFINITE:
            raise ValueError(f"nonfinite must be one of {NONFINITE}, got {self.nonfinite!r}")
        if self.normaliser is None:
            k = concrete("k", self.k)
            object.__setattr__(self, "normaliser", jnp.float64(_normaliser(k, self.precision)))
        elif not is_traced(self.normaliser):
            object.__setattr__(self, "normaliser", jnp.float64(v.positive("normaliser", self.normaliser)))

    @property
    def marginal(self) -> KurMarginal:
        """Return the intended law Kur(k) (not the reproduction's: see the class docstring)."""
        return KurMarginal(concrete("k", self.k))

    def transform(self, z: ArrayLike) -> jax.Array:
        """Return the code's samples at latent normals ``z`` (JAX path only), in ``z``'s dtype."""
        z = jnp.asarray(z)
        traced = is_traced(z) or is_traced(self.k) or is_traced(self.normaliser)
        if traced and self.nonfinite == "raise":
            raise TypeError(
                "PaperKur(nonfinite='raise') cannot check traced samples for ±inf; use nonfinite='keep' "
                "under jit and count the non-finite values yourself"
            )
        x = paper_kur_map(z.astype(self.precision), self.k, self.normaliser).astype(z.dtype)
        if not traced and self.nonfinite == "raise":
            bad = count_nonfinite(x)
            if bad:
                raise ValueError(
                    f"PaperKur(k={float(self.k)}, precision={self.precision!r}) produced {bad} non-finite "
                    f"samples out of {x.size} (the paper's code returns ±inf where p rounds to 0 or 1); "
                    "pass nonfinite='keep' to receive them"
                )
        return x

    def _covariance(self, shape):
        from localization.data.copula import Kur

        return Kur(self.xi, concrete("k", self.k)).covariance(shape)


@partial(jax.jit, static_argnames=("num_flips", "precision"))
def _paper_chain(key, coupling, x0, num_flips, precision):
    num, n = x0.shape
    k_site, k_acc = jax.random.split(key)
    sites = jax.random.randint(k_site, (num_flips, num), 0, n)
    unif = jax.random.uniform(k_acc, (num_flips, num), dtype=precision)
    J = jnp.asarray(coupling, precision)
    rows = jnp.arange(num)

    def pi(bond_sum):
        # pi = exp(-E), E = -(J * sum_i x_i x_{i-1} + 0.0)  (ising.py L17-29); the sum is an exact integer
        energy = -(J * bond_sum.astype(precision) + jnp.asarray(0.0, precision))
        return jnp.exp(-energy)

    def flip(carry, inputs):
        x, bonds = carry
        s, u = inputs
        xs = x[rows, s]
        delta = -2 * xs * (x[rows, (s - 1) % n] + x[rows, (s + 1) % n])
        ratio = pi(bonds + delta) / pi(bonds)
        accept_prob = jnp.where(1.0 < ratio, jnp.asarray(1.0, precision), ratio)  # L45
        accept = u < accept_prob  # L57 (False when the ratio is nan)
        x = x.at[rows, s].set(jnp.where(accept, -xs, xs))
        return (x, jnp.where(accept, bonds + delta, bonds)), None

    bonds0 = jnp.sum(x0 * jnp.roll(x0, 1, axis=1), axis=1)
    (x, _), _ = jax.lax.scan(flip, (x0, bonds0), (sites, unif))
    return x


def paper_metropolis_ising(
    key: jax.Array,
    J: float,
    n: int,
    num: int,
    *,
    num_flips: int = 1000,
    precision: str = "float32",
    x0: ArrayLike | None = None,
    dtype: DTypeLike = jnp.float64,
) -> jax.Array:
    """Return the last states of ``num`` chains of the code's Metropolis Ising sampler (ising.py L11-85).

    Uniform ±1 start (or ``x0``), ``num_flips`` proposals, no burn-in; the acceptance ratio is the
    quotient of the two full Boltzmann weights in ``precision`` (float32 would freeze the chain once
    ``J sum_i x_i x_{i-1} > 88.72`` if evaluated eagerly, not under ``jit``; see the module docstring).
    Not an exact Ising sample.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key (split into the start, the sites and the acceptance uniforms).
    J : float
        Coupling, real (ferromagnetic for J > 0).
    n : int
        Chain length, >= 2.
    num : int
        Number of chains (examples), >= 1.
    num_flips : int
        Proposals per chain, >= 0 (the code's default 1000).
    precision : str
        ``"float32"`` (the code's default dtype) or ``"float64"`` (its notebooks).
    x0 : ArrayLike or None
        Optional (num, n) start of ±1 entries (default: uniform random spins, as the code).
    dtype : DTypeLike
        Floating dtype of the result.

    Returns
    -------
    jax.Array
        (num, n) entries ±1.
    """
    key = v.key("key", key)
    J = v.real_scalar("J", J)
    n = v.integer("n", n, 2)
    num = v.integer("num", num, 1)
    num_flips = v.integer("num_flips", num_flips, 0)
    _precision("precision", precision)
    dtype = v.floating_dtype("dtype", dtype)
    k_init, k_chain = jax.random.split(key)
    if x0 is None:
        x0 = jnp.where(jax.random.bernoulli(k_init, 0.5, (num, n)), 1, -1).astype(jnp.int32)
    else:
        arr = np.asarray(x0)
        if arr.shape != (num, n) or not np.all(np.abs(arr) == 1):
            raise ValueError(f"x0 must be a ({num}, {n}) array of ±1, got shape {arr.shape}")
        x0 = jnp.asarray(arr, jnp.int32)
    return _paper_chain(k_chain, J, x0, num_flips, precision).astype(dtype)


@pytree_dataclass
class PaperIsing(DataModel):
    """The paper code's Ising sampler (``IsingDataset``) as a data model: a reproduction, not a sampler.

    ``sample`` returns the last states of :func:`paper_metropolis_ising` chains. ``marginal`` is
    exact (±1 by the chain's sign symmetry); ``covariance`` raises ``NotImplementedError``: the law of
    a chain stopped after ``num_flips`` proposals has no closed form (compare with
    :func:`localization.data.ising_correlation`).
    """

    lengthscale_name = "J"

    J: float
    num_flips: int = static_field(default=1000)
    precision: str = static_field(default="float32")

    def __post_init__(self):
        object.__setattr__(self, "J", family_parameter("J", self.J, v.nonnegative))
        object.__setattr__(self, "num_flips", v.integer("num_flips", self.num_flips, 0))
        _precision("precision", self.precision)

    @property
    def marginal(self) -> RademacherMarginal:
        """Return the coordinate law: ±1 with probability ½ each."""
        return RademacherMarginal()

    def check_shape(self, shape: tuple[int, ...]) -> None:
        """Raise ``ValueError`` unless ``shape`` is one axis (a ring)."""
        if len(shape) != 1:
            raise ValueError(f"n must be an int (1-D chain) for PaperIsing, got shape {shape}")

    def _sample(self, key, num, shape, dtype, method):
        if is_traced(self.J):
            raise TypeError("PaperIsing.J must be concrete (the chain is compiled per coupling)")
        return paper_metropolis_ising(
            key, float(self.J), shape[0], num, num_flips=self.num_flips, precision=self.precision, dtype=dtype
        )

    def _covariance(self, shape):
        raise NotImplementedError(
            "PaperIsing has no closed-form covariance (a chain stopped after num_flips proposals); "
            "estimate it from samples or use data.Ising(J).covariance for the target law"
        )
