r"""Measured checks of the data models' properties S1–S3 (paper §2.2; chapter *Idealized naturalistic data*).

:func:`property_statistics` tests, on samples of one data model, sign symmetry (S3), translation
invariance (S2) and weak dependence at the largest circular distance (S1), with bounded test
functions (``tanh``) so that heavy-tailed models are tested as reliably as the others. Every
statistic is a ratio to its standard error (``metrics.mean_and_se``), so ``|z| < 5`` reads
"consistent with zero".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import jax
import numpy as np

from localization import metrics
from localization import validation as v

if TYPE_CHECKING:
    from localization.data.base import DataModel

__all__ = ["property_statistics"]


def property_statistics(key: jax.Array, model: DataModel, *, n: int = 40, num: int = 10_000) -> dict[str, Any]:
    r"""Return the S1–S3 statistics of ``model`` from ``num`` samples of size ``n`` drawn with ``key``.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    model : DataModel
        The data model.
    n : int
        Ring size, >= 2.
    num : int
        Number of samples, >= 2.

    Returns
    -------
    dict
        The statistics:

        * ``s3`` — the largest :math:`|z|` of the means of :math:`\tanh X_i` and
          :math:`\tanh X_i\tanh X_{i+1}\tanh X_{i+2}` (odd statistics, zero under S3);
        * ``s2`` — the largest :math:`|z|` of the deviation of the position-wise means of
          :math:`\tanh^2 X_i` and :math:`\tanh X_i\tanh X_{i+1}` from their averages over positions
          (0/0 where a statistic is constant counts as 0);
        * ``alpha`` — two (mean, standard error) pairs: the event-pair lower bounds on the α-mixing
          coefficient at circular distance :math:`n/2`, for the events :math:`X_i>0` and
          :math:`|X_i|>\operatorname{median}|X|` (S1);
        * ``corr`` — the exact correlation :math:`\Sigma_{0,n/2}` (``model.covariance(n)``).
    """
    n = v.integer("n", n, 2)
    num = v.integer("num", num, 2)
    x = np.asarray(model.sample(key, num, n))
    t = np.tanh(x)
    half = n // 2
    s3a = metrics.mean_and_se(t.mean(axis=1))
    s3b = metrics.mean_and_se((t * np.roll(t, -1, axis=1) * np.roll(t, -2, axis=1)).mean(axis=1))
    s2 = 0.0
    for stat in (t**2, t * np.roll(t, -1, axis=1)):  # per position: should not depend on i
        pos_mean, pos_se = metrics.mean_and_se(stat)
        dev = np.abs(pos_mean - pos_mean.mean())
        s2 = max(s2, np.max(np.divide(dev, pos_se, out=np.zeros_like(dev), where=pos_se > 0)))  # 0/0 -> 0
    med = np.median(np.abs(x))
    alpha = []
    for event in (x > 0, np.abs(x) > med):
        e = event.astype(float)
        p = e.mean()
        alpha.append(metrics.mean_and_se((e * np.roll(e, -half, axis=1)).mean(axis=1) - p * p))
    return dict(
        s3=max(abs(m) / s for m, s in (s3a, s3b)),
        s2=s2,
        alpha=[(float(m), float(s)) for m, s in alpha],
        corr=float(np.asarray(model.covariance(n))[0, half]),
    )
