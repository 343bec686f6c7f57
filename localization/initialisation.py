r"""Initial parameters of the paper's networks (Section 2.1) and the initialisation axis.

Initialisation (reference settings): every weight is an independent centred Gaussian (the paper's
"isotropic Gaussian distribution with scaled variance", Section 2.1) with the Xavier/Glorot variance
:math:`2/(\text{fan}_\text{in}+\text{fan}_\text{out})` multiplied by ``init_scale`` (0.001 for the
single neuron, 0.1 for the committee machine in the paper's figures). For a single neuron
:math:`\text{fan}_\text{out}=1`, so the variance is ``init_scale · 2/(N+1)``. The readout and the biases
of :func:`init_params` follow the paper's code rather than its text (Section 2.1 says weights *and
biases* are Gaussian): the readout starts at 1 plus a Xavier draw (``init_shift=1.`` of the readout
layer), every bias at 0.

:func:`init_weights` draws the first-layer weights alone (the single neuron, or K fields for
experiments that build their own parameters), :func:`init_params` the :class:`~localization.models.Params`
of the committee machine and the two-layer network; both take ``n`` as everywhere in the library
(an int, a ring of N sites, or a grid shape; the weights are over the flattened input) and an optional
``num`` of independent initialisations, a leading axis. :func:`flatten_initialisations` validates the
initial parameters a training function is given and merges their leading axes into that one axis.
The networks themselves are :mod:`localization.models`.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import ArrayLike, DTypeLike

from localization import prng
from localization import validation as v
from localization.models import Params

__all__ = [
    "init_weights",
    "init_params",
    "flatten_initialisations",
]


def init_weights(
    key: jax.Array,
    n: int | tuple[int, ...],
    init_scale: float = 1.0,
    *,
    K: int | None = None,
    num: int | None = None,
    dtype: DTypeLike = jnp.float64,
) -> jax.Array:
    r"""Xavier-normal first-layer weights with variance multiplied by ``init_scale``.

    Each entry is :math:`\mathcal N(0,\ \text{init\_scale}\cdot 2/(N+\text{fan}_\text{out}))` with
    :math:`N=\prod n` input sites and :math:`\text{fan}_\text{out}=K` (1 for a single neuron), as
    :func:`init_params` draws the weights of the many-neuron models.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    n : int or tuple[int, ...]
        Input size as everywhere in the library: an int (a ring of N sites) or a grid shape such as
        ``(30, 30)`` (a torus); the weights are over the flattened input (row-major, the layout of the
        data models' samples).
    init_scale : float
        Variance multiplier (> 0); reference values 0.001 (neuron), 0.1 (committee).
    K : int or None
        Number of hidden units; adds an axis of that length before the input axis.
    num : int or None
        Number of independent initialisations; adds a leading axis of that length.
    dtype : DTypeLike
        Floating dtype of the result.

    Returns
    -------
    jax.Array
        Shape (N,), (K, N), (num, N) or (num, K, N).
    """
    key = v.key("key", key)
    N = math.prod(v.shape("n", n, minimum=1))
    init_scale = v.positive("init_scale", init_scale)
    fan_out = 1 if K is None else v.integer("K", K, 1)
    if num is not None:
        num = v.integer("num", num, 1)
    dtype = _float_dtype(dtype)
    std = math.sqrt(init_scale * 2.0 / (N + fan_out))
    full = (*(() if num is None else (num,)), *(() if K is None else (fan_out,)), N)
    return _scaled_normal(key, jnp.asarray(std, dtype), full, dtype)


@partial(jax.jit, static_argnums=(2, 3))
def _scaled_normal(key, std, shape, dtype):
    return std * prng.flat_normal(key, shape, dtype)


def init_params(
    key: jax.Array,
    K: int,
    n: int | tuple[int, ...],
    init_scale: float = 0.1,
    *,
    model: str = "committee",
    bias: bool = False,
    readout_mean: float = 1.0,
    num: int | None = None,
    dtype: DTypeLike = jnp.float64,
) -> Params:
    """Return initial ``models.Params`` of ``model`` "committee" (w, optional b) or "two_layer" (w, a, b, c).

    As the paper's code (``Linear`` and ``MLP`` in ``localization/models/feedforward.py``,
    github.com/leonlufkin/Localization at 5ebb565): first-layer weights (K, N) Xavier-normal times
    ``init_scale`` (variance ``init_scale · 2/(N+K)``, as :func:`init_weights`); readout ``a`` (K,) =
    ``readout_mean`` + Xavier-normal of the readout layer (variance ``init_scale · 2/(K+1)``); hidden
    biases ``b`` (K,) and the output bias ``c`` start at 0.

    ``n`` is the input size as everywhere in the library: an int (a ring of N = n sites) or a grid
    shape such as ``(30, 30)``; the weights are then over the flattened grid, (K, N) with
    N = prod(n) in row-major order, the layout of the data models' samples — train them with the same ``n``.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    K : int
        Number of hidden units, >= 1.
    n : int or tuple[int, ...]
        Input size; N = prod(n).
    init_scale : float
        Variance multiplier, > 0.
    model : str
        "committee" or "two_layer".
    bias : bool
        Whether to include the biases b (and c).
    readout_mean : float
        Mean of the two-layer readout ``a``.
    num : int or None
        Number of independent initialisations (a leading axis), or None.
    dtype : DTypeLike
        Floating dtype.

    Returns
    -------
    Params
        ``w`` ([num,] K, N) and, as asked, ``b`` ([num,] K), ``a`` ([num,] K), ``c`` ([num]).
    """
    key = v.key("key", key)
    K = v.integer("K", K, 1)
    N = math.prod(v.shape("n", n, minimum=1))
    init_scale = v.positive("init_scale", init_scale)
    if model not in ("committee", "two_layer"):
        raise ValueError(f"model must be 'committee' or 'two_layer', got {model!r}")
    if not isinstance(bias, bool):
        raise TypeError(f"bias must be a bool, got {bias!r}")
    if num is not None:
        num = v.integer("num", num, 1)
    readout_mean = v.real_scalar("readout_mean", readout_mean)
    dtype = _float_dtype(dtype)
    std_w = math.sqrt(init_scale * 2.0 / (N + K))
    std_a = math.sqrt(init_scale * 2.0 / (1 + K))
    consts = [jnp.asarray(c, dtype) for c in (std_w, std_a, readout_mean)]
    return _init_params(key, *consts, K, N, model, bias, num, dtype)


@partial(jax.jit, static_argnums=(4, 5, 6, 7, 8, 9))
def _init_params(key, std_w, std_a, readout_mean, K, N, model, bias, num, dtype):
    kw, _, ka = jax.random.split(key, 3)  # three keys: the weights stay the draw of earlier versions
    lead = () if num is None else (num,)
    w = std_w * prng.flat_normal(kw, (*lead, K, N), dtype)
    b = jnp.zeros((*lead, K), dtype) if bias else None
    if model == "committee":
        return Params(w=w, b=b)
    a = readout_mean + std_a * prng.flat_normal(ka, (*lead, K), dtype)
    c = jnp.zeros(lead, dtype) if bias else None
    return Params(w=w, b=b, a=a, c=c)


def _float_dtype(dtype):
    return v.floating_dtype("dtype", dtype)


def _param_ndim(model: str) -> int:
    return 1 if model == "neuron" else 2


def flatten_initialisations(
    w0: ArrayLike | Params, model: str, dtype: DTypeLike, n: int | tuple[int, ...] | None = None
) -> tuple[Any, tuple[int, ...], int]:
    """Validate initial parameters ``w0`` of ``model`` and merge their leading axes.

    Parameters
    ----------
    w0 : ArrayLike or Params
        (..., N) array for the neuron; (..., K, N) array or :class:`~localization.models.Params` for the committee;
        :class:`~localization.models.Params` (w, a, optional b, c) for the two-layer network. The leading axes ``...``
        index independent initialisations.
    model : str
        One of :data:`~localization.models.MODELS`.
    dtype : DTypeLike
        Floating dtype of the result.
    n : int or tuple[int, ...] or None
        If given, the input size the last axis of w must match (N = prod(n)).

    Returns
    -------
    tuple
        ``(params, lead, N_w)``: the parameters as NumPy arrays of ``dtype`` with the leading axes
        merged into one axis of length I = prod(lead) (tracers stay traced), the leading shape, and
        the input size (last axis of w).
    """
    if model == "neuron":
        if isinstance(w0, Params):
            raise TypeError("w0 must be an (..., N) array for model='neuron', got Params")
        w = v.float_array("w0", w0, ndim_min=1)
        params = jnp.asarray(w)
        W = params
    else:
        if isinstance(w0, Params):
            params = w0
        elif model == "committee":
            params = Params(w=v.float_array("w0", w0, ndim_min=2))
        else:
            raise TypeError("w0 must be a localization.models.Params (w, a, ...) for model='two_layer'")
        W = v.float_array("w0.w", params.w, ndim_min=2)
        if model == "committee" and (params.a is not None or params.c is not None):
            raise ValueError("model='committee' has a fixed readout 1/K: w0.a and w0.c must be None")
        if model == "two_layer" and params.a is None:
            raise ValueError("model='two_layer' needs readout weights w0.a of shape (..., K)")
    lead = tuple(W.shape[: W.ndim - _param_ndim(model)])
    N_w = W.shape[-1]
    if n is not None and N_w != (N := math.prod(v.shape("n", n, minimum=1))):
        raise ValueError(f"w0 must have last axis of length N = prod(n) = {N}, got shape {tuple(W.shape)}")
    if model != "neuron":
        K = W.shape[-2]
        own = {"b": (K,), "a": (K,), "c": ()}
        for name in ("b", "a", "c"):
            leaf = getattr(params, name)
            if leaf is None:
                continue
            leaf = v.float_array(f"w0.{name}", leaf, ndim_min=0)
            if tuple(leaf.shape) != lead + own[name]:
                raise ValueError(f"w0.{name} must have shape {lead + own[name]}, got {tuple(leaf.shape)}")
    I = int(np.prod(lead, dtype=np.int64)) if lead else 1

    def flat(a):
        # concrete values are prepared on the host (numpy): no small XLA programs to compile per call
        if isinstance(a, jax.core.Tracer):
            a = jnp.asarray(a, dtype)
        else:
            a = np.asarray(a, dtype)
            if not np.all(np.isfinite(a)):
                raise ValueError("w0 must be finite")
        return a.reshape((I,) + a.shape[len(lead) :])

    params = jax.tree_util.tree_map(flat, params)
    return params, lead, N_w
