"""The two-class length-scale task of paper Eq. (1), and the named families the chapters explore.

:class:`LengthscaleTask`: y ~ Bernoulli(1/2), X | y ~ model_y, with model1 the longer length-scale.
It samples i.i.d. labels (:meth:`LengthscaleTask.sample`) or exact half/half batches
(:meth:`LengthscaleTask.sample_balanced`). :func:`family_task` builds the task of a named family
(:data:`FAMILIES`) at one parameter value, as the chapters' explorers and sweeps do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import DTypeLike

from localization import validation as v
from localization.data import spectral
from localization.data.base import DataModel, is_traced, sample_arguments
from localization.data.clone import GaussianClone
from localization.data.copula import NLGP, CopulaModel, Kur
from localization.data.ising import Ising
from localization.data.marginals import Marginal
from localization.pytree import pytree_dataclass

__all__ = ["Task", "BalancedTask", "LengthscaleTask", "FAMILIES", "family_task", "lengthscale_tasks"]


@runtime_checkable
class Task(Protocol):
    """What training needs of a task: labelled batches, x (num, N) and y (num,)."""

    def sample(
        self, key: jax.Array, num: int, n: int | tuple[int, ...], dtype: DTypeLike = ...
    ) -> tuple[jax.Array, jax.Array]:
        """Return ``num`` labelled examples on ``n`` sites: x (num, N) in ``dtype`` and y (num,)."""
        ...


@runtime_checkable
class BalancedTask(Task, Protocol):
    """A task that can also draw exactly half of each class."""

    def sample_balanced(
        self, key: jax.Array, num: int, n: int | tuple[int, ...], dtype: DTypeLike = ...
    ) -> tuple[jax.Array, jax.Array]:
        """Return ``num`` (even) examples, exactly half of each class: x (num, N) and y (num,)."""
        ...


@pytree_dataclass
class LengthscaleTask:
    """Two-class length-scale discrimination (paper Eq. (1)): y ~ Bernoulli(1/2), X | y ~ model_y.

    ``model1`` (label y = 1) must have the longer length-scale (xi1 > xi0; J1 > J0 for Ising).
    """

    model0: DataModel
    model1: DataModel

    def __post_init__(self):
        for name in ("model0", "model1"):
            m = getattr(self, name)
            if not isinstance(m, DataModel):
                raise TypeError(f"{name} must be a data model (e.g. data.NLGP(xi, gain)), got {m!r}")
        m0, m1 = self.model0, self.model1
        if type(m0) is type(m1):
            l0, l1 = m0.lengthscale, m1.lengthscale
            if not (is_traced(l0) or is_traced(l1)) and np.ndim(l0) == 0 and np.ndim(l1) == 0:
                if not float(l1) > float(l0):
                    raise ValueError(
                        "model1 (label y = 1) must have the longer length-scale: need "
                        f"lengthscale1 > lengthscale0, got {float(l1)} <= {float(l0)}"
                    )

    @classmethod
    def of(cls, model_cls: type[DataModel], **params: Any) -> LengthscaleTask:
        """Build from one model class; 2-tuples are split per class (y=0, y=1), scalars shared.

        Example: ``LengthscaleTask.of(NLGP, xi=(1.0, 3.0), gain=100.0)``;
        ``LengthscaleTask.of(Ising, J=(0.3, 0.7))``.
        """
        if not (isinstance(model_cls, type) and issubclass(model_cls, DataModel)):
            raise TypeError(f"model_cls must be a data model class (e.g. data.NLGP), got {model_cls!r}")
        p0, p1 = {}, {}
        for name, value in params.items():
            if isinstance(value, tuple):
                if len(value) != 2:
                    raise ValueError(
                        f"{name} must be a scalar or a 2-tuple (value for y=0, value for y=1), got {value!r}"
                    )
                p0[name], p1[name] = value
            else:
                p0[name] = p1[name] = value
        return cls(model_cls(**p0), model_cls(**p1))

    def sample(
        self, key: jax.Array, num: int, n: int | tuple[int, ...], dtype: DTypeLike = jnp.float64, method: str = "auto"
    ) -> tuple[jax.Array, jax.Array]:
        """(x (num, N), y (num,)): y ~ Bernoulli(1/2) iid (balanced in expectation), x | y ~ model_y.

        ``method``: the map of the spectral samplers to the sites (``"auto"``, ``"dense"`` or ``"fft"``,
        :func:`localization.data.spectral.to_sites`).

        Two copula models of one class (e.g. NLGP(xi0, g), NLGP(xi1, g)) share one latent normal
        draw per example: Z = (G * a_y) Q^T, X = T_y(Z), which has exactly model_y's law given y, at
        the random-number and matmul cost of one class. When both classes have the same family
        parameter, one transform serves both: equal concrete values, or the *same* traced value —
        which is why :mod:`localization.train` passes equal task leaves into ``jit`` once.
        """
        key, num, shape, dtype = sample_arguments(key, num, n, dtype)
        method = spectral.check_method("method", method)
        m0, m1 = self.model0, self.model1
        m0.check_shape(shape)
        m1.check_shape(shape)
        ky, k0, k1 = jax.random.split(key, 3)
        y = jax.random.bernoulli(ky, 0.5, (num,))
        if isinstance(m0, CopulaModel) and type(m0) is type(m1):
            g = spectral.standard_normals(k0, (num, math.prod(shape)), dtype)
            amps0 = jnp.asarray(spectral.grid_amplitudes(m0.xi, shape), dtype)
            amps1 = jnp.asarray(spectral.grid_amplitudes(m1.xi, shape), dtype)
            z = spectral.to_sites(g * jnp.where(y[:, None], amps1, amps0), shape, method)
            if _same_leaves(m0, m1):
                x = m0.transform(z)
            else:
                x = jnp.where(y[:, None], m1.transform(z), m0.transform(z))
        else:
            x0 = m0.sample(k0, num, shape, dtype, method)
            x1 = m1.sample(k1, num, shape, dtype, method)
            x = jnp.where(y[:, None], x1, x0)
        return x, y.astype(dtype)

    def sample_balanced(
        self, key: jax.Array, num: int, n: int | tuple[int, ...], dtype: DTypeLike = jnp.float64, method: str = "auto"
    ) -> tuple[jax.Array, jax.Array]:
        """(x (num, N), y (num,)) with exactly ``num // 2`` examples of class 0 first, then the rest of class 1.

        Each half is drawn from its own model (``num >= 2``); the cost is that of one batch, so the
        shared-draw path of :meth:`sample` would save nothing here.
        """
        key, num, shape, dtype = sample_arguments(key, num, n, dtype)
        if num < 2:
            raise ValueError(f"num must be >= 2 for a balanced batch (one example per class at least), got {num}")
        k0, k1 = jax.random.split(key)
        m0 = num // 2
        x0 = self.model0.sample(k0, m0, shape, dtype, method)
        x1 = self.model1.sample(k1, num - m0, shape, dtype, method)
        x = jnp.concatenate([x0, x1], axis=0)
        y = jnp.concatenate([jnp.zeros((m0,), dtype), jnp.ones((num - m0,), dtype)])
        return x, y

    def covariances(self, n: int | tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """(Sigma0, Sigma1): exact float64 covariances of X given y = 0 and y = 1."""
        return self.model0.covariance(n), self.model1.covariance(n)

    @property
    def marginals(self) -> tuple[Marginal, Marginal]:
        """Return the coordinate laws of the two classes (y = 0, y = 1)."""
        return self.model0.marginal, self.model1.marginal


def lengthscale_tasks(name: str, tasks: Any) -> list[LengthscaleTask]:
    """Return ``tasks`` as a list after checking it is a non-empty sequence of :class:`LengthscaleTask`.

    Parameters
    ----------
    name : str
        The argument's name, for the error message.
    tasks : Sequence[LengthscaleTask]
        The tasks of a sweep.

    Returns
    -------
    list[LengthscaleTask]

    Raises
    ------
    TypeError
        When ``tasks`` is not a non-empty sequence (a string is not one), or an item is not a task.
    """
    if isinstance(tasks, (str, bytes)) or not isinstance(tasks, Sequence) or len(tasks) == 0:
        raise TypeError(f"{name} must be a non-empty sequence of tasks, got {tasks!r}")
    for i, task in enumerate(tasks):
        if not isinstance(task, LengthscaleTask):
            raise TypeError(f"{name}[{i}] must be a data.LengthscaleTask, got {type(task).__name__}")
    return list(tasks)


def _same_leaves(m0, m1) -> bool:
    """Tell whether both models have equal family parameters (so one transform suffices).

    Equal means equal concrete scalars, or the identical object (e.g. the same tracer, as ``train`` passes a
    parameter shared by both classes once under jit/vmap).
    """
    for f in type(m0).leaf_fields:
        a, b = getattr(m0, f), getattr(m1, f)
        if a is b:
            continue
        if is_traced(a) or is_traced(b) or np.ndim(a) != 0 or np.ndim(b) != 0:
            return False
        if float(a) != float(b):
            return False
    return True


#: Families offered by :func:`family_task` (parameter meaning).
FAMILIES = {
    "NLGP": "gain g",
    "Kur": "exponent k",
    "Ising": "coupling J1 (J0 = 0.3)",
    "Gaussian clone of NLGP": "gain g of the cloned NLGP",
}


def family_task(family: str, param: float, xi: tuple[float, float] = (1.0, 3.0)) -> LengthscaleTask:
    """Return the length-scale task of ``family`` at parameter ``param`` (see :data:`FAMILIES`).

    NLGP(g) and Kur(k) use length-scales ``xi``; Ising uses couplings (0.3, ``param``); the Gaussian
    clone copies the exact covariances of NLGP(ξ_y, g) with Gaussian marginals.

    Parameters
    ----------
    family : str
        One of :data:`FAMILIES`.
    param : float
        The family parameter: NLGP and Gaussian-clone gain g, Kur exponent k, Ising coupling J1 > 0.3.
    xi : tuple[float, float]
        Length-scales (ξ₀, ξ₁) of the two classes (not used by Ising).

    Returns
    -------
    LengthscaleTask
        The task (class 0, class 1).
    """
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {tuple(FAMILIES)}, got {family!r}")
    param = v.real_scalar("param", param)
    xi0, xi1 = xi
    if family == "NLGP":
        return LengthscaleTask.of(NLGP, xi=(xi0, xi1), gain=param)
    if family == "Kur":
        return LengthscaleTask.of(Kur, xi=(xi0, xi1), k=param)
    if family == "Ising":
        if not param > 0.3:
            raise ValueError(f"param (J1) must be > J0 = 0.3 for Ising, got {param}")
        return LengthscaleTask.of(Ising, J=(0.3, param))
    return LengthscaleTask(GaussianClone(NLGP(xi=xi0, gain=param)), GaussianClone(NLGP(xi=xi1, gain=param)))
