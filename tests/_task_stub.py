"""Private stand-in for localization.data used by the models/train tests until data.py exists.

Implements only the interface train.py relies on: pytree data models with ``.sample(key, num, n, dtype)``
and ``LengthscaleTask(model0, model1).sample(key, num, n, dtype) -> (x, y)``, ``.covariances(n)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np

from localization import _covariance


def _n_tuple(n):
    return (n,) if isinstance(n, int) else tuple(n)


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class Gaussian:
    xi: float = field(metadata=dict(static=True))

    def covariance(self, n):
        return _covariance.covariance_matrix(self.xi, _n_tuple(n))

    def sample(self, key, num, n, dtype=jnp.float64):
        root = jnp.asarray(_covariance.sqrt_matrix(self.xi, _n_tuple(n)), dtype)
        z = jax.random.normal(key, (num, root.shape[0]), dtype)
        return z @ root


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class NLGP:
    xi: float = field(metadata=dict(static=True))
    gain: float = 1.0

    def covariance(self, n):  # not exact (stub)
        raise NotImplementedError

    def sample(self, key, num, n, dtype=jnp.float64):
        z = Gaussian(self.xi).sample(key, num, n, dtype)
        g = jnp.asarray(self.gain, dtype)
        g2 = g * g
        norm = jnp.sqrt((2.0 / math.pi) * jnp.arcsin(2.0 * g2 / (1.0 + 2.0 * g2)))
        return jax.lax.erf(g * z) / norm


@jax.tree_util.register_dataclass
@dataclass(frozen=True)
class LengthscaleTask:
    model0: object
    model1: object

    def covariances(self, n):
        return np.asarray(self.model0.covariance(n)), np.asarray(self.model1.covariance(n))

    def sample(self, key, num, n, dtype=jnp.float64):
        ky, k0, k1 = jax.random.split(key, 3)
        y = jax.random.bernoulli(ky, 0.5, (num,))
        x0 = self.model0.sample(k0, num, n, dtype)
        x1 = self.model1.sample(k1, num, n, dtype)
        return jnp.where(y[:, None], x1, x0), y.astype(dtype)
