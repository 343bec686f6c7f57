"""The single binary pulse on the circle (notes 001, Sec. 1; not used in the paper)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from localization import validation as v
from localization.data import spectral
from localization.data.base import DataModel
from localization.data.marginals import RademacherMarginal
from localization.pytree import pytree_dataclass, static_field

__all__ = ["SinglePulse"]


@pytree_dataclass
class SinglePulse(DataModel):
    """Binary pulse on the circle (notes 001, Sec. 1; unused in the paper), centred to +-1.

    Length l uniform on the integers in [ceil(low N), floor(high N)] (fractions of N, 0 < low <= high
    <= 1), start uniform on {0..N-1}, wrapping around; x_i = +1 on the pulse, -1 elsewhere; then
    x -> -x with probability 1/2 (the {0,1} pulse with flip 1-x, mapped by 2x-1). Marginal: +-1.
    Only 1-D ``n``.
    """

    lengthscale_name = "mean pulse fraction (low + high) / 2"

    low: float = static_field()
    high: float = static_field()

    def __post_init__(self):
        low = v.in_range("low", self.low, 0.0, 1.0, low_open=True)
        high = v.in_range("high", self.high, 0.0, 1.0, low_open=True)
        if high < low:
            raise ValueError(f"high must be >= low = {low} (valid range: low <= high <= 1), got {high}")
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    @property
    def lengthscale(self) -> float:
        """The mean pulse length as a fraction of n, (low + high)/2."""
        return 0.5 * (self.low + self.high)

    @property
    def marginal(self) -> RademacherMarginal:
        """Return the coordinate law: ±1 with probability ½ each."""
        return RademacherMarginal()

    def lengths(self, n: int) -> tuple[int, int]:
        """Return the shortest and longest pulse lengths on a ring of ``n`` sites.

        Parameters
        ----------
        n : int
            Number of sites.

        Returns
        -------
        tuple[int, int]
            ``(lo, hi)``: the integer lengths in [low n, high n], clipped to [1, n].
        """
        N = n
        lo = max(1, math.ceil(self.low * N - 1e-9))
        hi = min(N, math.floor(self.high * N + 1e-9))
        if hi < lo:
            raise ValueError(
                f"n = {N} admits no integer pulse length in [{self.low} n, {self.high} n]; widen low/high or grow n"
            )
        return lo, hi

    def check_shape(self, shape: tuple[int, ...]) -> None:
        """Raise ``ValueError`` unless ``shape`` is one axis admitting an integer pulse length."""
        if len(shape) != 1:
            raise ValueError(f"n must be an int (1-D signal) for SinglePulse, got shape {shape}")
        self.lengths(shape[0])

    def _sample(self, key, num, shape, dtype, method):
        N = shape[0]
        lo, hi = self.lengths(N)
        k1, k2, k3 = jax.random.split(key, 3)
        length = jax.random.randint(k1, (num, 1), lo, hi + 1)
        start = jax.random.randint(k2, (num, 1), 0, N)
        sign = jnp.where(jax.random.bernoulli(k3, 0.5, (num, 1)), 1.0, -1.0)
        inside = ((jnp.arange(N)[None, :] - start) % N) < length
        return (jnp.where(inside, 1.0, -1.0) * sign).astype(dtype)

    def _covariance(self, shape):
        N = shape[0]
        lo, hi = self.lengths(N)
        row = np.zeros(N)
        for length in range(lo, hi + 1):
            x = np.where(np.arange(N) < length, 1.0, -1.0)
            # average over the N starts of x_0 x_d: circular autocorrelation / N
            row += np.array([np.dot(x, np.roll(x, -d)) for d in range(N)]) / N
        row /= hi - lo + 1
        return spectral.circulant(row)
