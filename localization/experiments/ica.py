r"""Independent component analysis of the localization data (paper §4.4, Fig. 6 right; Fig. 1 right).

The paper compares its networks with FastICA {Hyvärinen 1999} as implemented in scikit-learn, the
implementation used here. Its code (``figures/fig5.ipynb`` of github.com/leonlufkin/Localization at
commit 64732b0) draws 100 000 examples of the length-scale task — both classes, in equal proportion —
and fits ``FastICA(n_components=40, algorithm="parallel", whiten="unit-variance", random_state=0)``
with the default contrast (``fun="logcosh"``); the receptive fields it plots are rows of
``components_``, the *unmixing* filters :math:`s = W x`, the first ten of the forty.

* :func:`fit_ica` — sample a task with an explicit JAX ``key`` and fit FastICA; returns an
  :class:`ICAResult` with the filters (n_components, N), the mixing matrix and the convergence status;
* :func:`fig6_fit`, :func:`fig1_grid_fit` — the paper's two fits (Fig. 6 right: Kur(3) on the ring of
  :data:`N` sites, 40 components; Fig. 1 right: NLGP(100) on the :data:`GRID` torus, 64 components),
  drawn by :mod:`localization.figures.ica`;
* :func:`filter_outputs` — a fit's filters applied to fresh examples (:class:`FilterOutputs`).

Whitening keeps the ``n_components`` directions of largest variance. The data's covariance is
circulant (translation invariance, property S2), so those directions are the lowest Fourier modes:
with fewer components than sites, every filter is a combination of the leading modes only (a field
no sharper than the shortest kept wavelength).
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from localization import data, field_analysis, metrics
from localization import validation as v
from localization.data.base import DataModel
from localization.data.task import Task

__all__ = [
    "ICAResult",
    "fit_ica",
    "ALGORITHMS",
    "CONTRASTS",
    "N",
    "XI",
    "GRID",
    "XI_GRID",
    "fig6_fit",
    "fig1_grid_fit",
    "FilterOutputs",
    "filter_outputs",
]

ALGORITHMS = ("parallel", "deflation")
CONTRASTS = ("logcosh", "exp", "cube")
#: Ring size of the paper's ring fit (Fig. 6 right) and length-scales of its task (Kur(3)).
N, XI = 40, (1.0, 3.0)
#: The torus of the paper's grid fit (Fig. 1 right) and its length-scales (NLGP(100)).
GRID, XI_GRID = (12, 12), (0.1, 0.7)


class ICAResult(NamedTuple):
    """A FastICA fit.

    Attributes
    ----------
    filters : (C, N) float64 unmixing filters (scikit-learn's ``components_``): component c of an input
        x is ``filters[c] @ (x - mean)``; these are the "receptive fields" the paper plots.
    mixing : (N, C) float64 mixing matrix (``mixing_``): x ≈ mean + mixing @ s.
    n_iter : iterations used (the largest over components for ``algorithm="deflation"``).
    converged : ``n_iter < max_iter`` (scikit-learn warns for "parallel" only; this flag is for both).
    """

    filters: np.ndarray
    mixing: np.ndarray
    n_iter: int
    converged: bool


def fit_ica(
    key: jax.Array,
    task: Task | DataModel,
    n_components: int,
    *,
    num: int = 100_000,
    n: int | tuple[int, ...] = 40,
    algorithm: str = "parallel",
    fun: str = "logcosh",
    max_iter: int = 200,
    tol: float = 1e-4,
    blas_threads: int | None = 1,
) -> ICAResult:
    """Fit FastICA (scikit-learn, ``whiten="unit-variance"``) to ``num`` examples of ``task``.

    Parameters
    ----------
    key : JAX PRNG key: the examples come from ``task.sample(key, num, n)``, FastICA's own random start
        from ``random_state`` drawn with ``fold_in(key, 1)``.
    task : a task with ``sample(key, num, n, dtype) -> (x, y)`` (e.g. ``data.family_task("Kur", 3.0)``):
        both classes enter, as in the paper's code; or a single data model (e.g. ``task.model1``): one
        class only.
    n_components : number of components C, 1 ≤ C ≤ N = prod(n).
    num : examples (> C); the paper's 100 000 by default.
    n : input size, an int (ring) or a grid shape such as (12, 12).
    algorithm : "parallel" (the paper's) or "deflation". fun : "logcosh" (default), "exp" or "cube".
    max_iter, tol : FastICA's iteration cap and tolerance (scikit-learn's defaults 200, 1e-4).
    blas_threads : BLAS threads during the fit (``None``: the library default). One by default: on a
        loaded 2-core machine the default two OpenBLAS threads made a 20 000 × 40 fit 3 to 50 times slower
        (9.7 s vs 31.9 s; 2-5 s vs 199 s) through oversubscription.

    Returns
    -------
    ICAResult, with ``converged`` False (and a ``RuntimeWarning``) if the iteration cap was reached.
    """
    from sklearn.decomposition import FastICA
    from threadpoolctl import threadpool_limits

    key = v.key("key", key)
    if not isinstance(task, (Task, DataModel)):
        raise TypeError(f"task must be a task or a data model with a sample method, got {type(task).__name__}")
    shape = v.shape("n", n, minimum=1)
    N = math.prod(shape)
    n_components = v.integer("n_components", n_components, 1)
    if n_components > N:
        raise ValueError(f"n_components must be at most N = prod(n) = {N}, got {n_components}")
    num = v.integer("num", num, n_components + 1)
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
    if fun not in CONTRASTS:
        raise ValueError(f"fun must be one of {CONTRASTS}, got {fun!r}")
    max_iter = v.integer("max_iter", max_iter, 1)
    tol = v.positive("tol", tol)
    if blas_threads is not None:
        blas_threads = v.integer("blas_threads", blas_threads, 1)
    if isinstance(task, DataModel):
        x = task.sample(key, num, shape, jnp.float64)
    else:
        x, _ = task.sample(key, num, shape, jnp.float64)
    x = np.asarray(x, np.float64)
    if not np.all(np.isfinite(x)):
        raise ValueError("task produced non-finite examples")
    seed = int(jax.random.randint(jax.random.fold_in(key, 1), (), 0, 2**31 - 1))
    ica = FastICA(
        n_components=n_components,
        algorithm=algorithm,
        whiten="unit-variance",
        fun=fun,
        max_iter=max_iter,
        tol=tol,
        random_state=seed,
    )
    with warnings.catch_warnings(), threadpool_limits(blas_threads):
        warnings.simplefilter("ignore")  # convergence is reported below, for both algorithms alike
        ica.fit(x)
    n_iter = int(ica.n_iter_)
    converged = n_iter < max_iter
    if not converged:
        warnings.warn(
            f"FastICA reached max_iter = {max_iter} without converging (tol = {tol}); raise max_iter",
            RuntimeWarning,
            stacklevel=2,
        )
    return ICAResult(
        filters=np.asarray(ica.components_, np.float64),
        mixing=np.asarray(ica.mixing_, np.float64),
        n_iter=n_iter,
        converged=converged,
    )


def fig6_fit(key: jax.Array) -> ICAResult:
    """Fit FastICA as the paper's Fig. 6 (right): Kur(3) at ξ = :data:`XI` on the ring of :data:`N` sites.

    The paper's call (:func:`fit_ica` defaults): 100 000 examples of both classes, 40 components.

    Parameters
    ----------
    key : jax.Array
        PRNG key of the examples and of FastICA's start.

    Returns
    -------
    ICAResult
        40 filters, each (N,).
    """
    return fit_ica(key, data.family_task("Kur", 3.0, XI), N)


def fig1_grid_fit(key: jax.Array) -> ICAResult:
    """Fit FastICA as the paper's Fig. 1 (right), ICA panel: NLGP(100) at ξ = :data:`XI_GRID` on :data:`GRID`.

    100 000 examples of both classes, 64 components on the 12 × 12 torus.

    Parameters
    ----------
    key : jax.Array
        PRNG key of the examples and of FastICA's start.

    Returns
    -------
    ICAResult
        64 filters, each (144,) (row-major over the grid).
    """
    return fit_ica(key, data.family_task("NLGP", 100.0, XI_GRID), 64, n=GRID)


class FilterOutputs(NamedTuple):
    """The outputs of a fit's filters on fresh examples (:func:`filter_outputs`).

    Attributes
    ----------
    outputs : (num, C) ndarray
        ``(x - mean(x)) @ W^T`` for ``num`` fresh examples x of the task.
    labels : (num,) ndarray
        Their classes.
    kurtosis : (C,) ndarray
        The sample excess kurtosis of each filter's output (:func:`localization.metrics.sample_excess_kurtosis`).
    localized : (C,) bool ndarray
        :func:`localization.field_analysis.is_localized` of each filter.
    """

    outputs: np.ndarray
    labels: np.ndarray
    kurtosis: np.ndarray
    localized: np.ndarray


def filter_outputs(key: jax.Array, task: data.LengthscaleTask, fit: ICAResult, num: int = 100_000) -> FilterOutputs:
    """Apply a fit's filters to ``num`` fresh float64 examples of ``task`` (both classes, centred).

    Parameters
    ----------
    key : jax.Array
        The examples' key.
    task : LengthscaleTask
        The fitted task.
    fit : ICAResult
        ``filters`` (C, n), n the ring size.
    num : int
        Examples, >= 2.

    Returns
    -------
    FilterOutputs
    """
    if not isinstance(fit, ICAResult):
        raise TypeError(f"fit must be an ICAResult (ica.fit_ica), got {type(fit).__name__}")
    if not isinstance(num, int) or num < 2:
        raise ValueError(f"num must be an integer >= 2, got {num!r}")
    n = fit.filters.shape[-1]
    x, y = (np.asarray(a) for a in task.sample(key, num, n, jnp.float64))
    s = (x - x.mean(0)) @ fit.filters.T
    kurtosis = np.asarray(metrics.sample_excess_kurtosis(s, axis=0))
    return FilterOutputs(s, y, kurtosis, field_analysis.is_localized(fit.filters, n))
