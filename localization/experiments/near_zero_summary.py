r"""What the near-zero records say: share, width and IPR of SGD fields, pooled over seeds (simulation chapter).

The measures of :mod:`localization.field_analysis.localized` (the book's definition of a localized
field and the bump's width) and the IPR along runs, and the summaries of the records of
:mod:`localization.experiments.near_zero` that the chapter and its figure read.

* :func:`field_paths` — share, width and IPR of a run's fields at every checkpoint;
* :func:`localization_time` — the first checkpoint from which a field stays localized;
* :func:`near_zero_summary` — one :class:`NearZeroPoint` per value of the near-zero record;
* :func:`batch_scan_summary` — one :class:`BatchPoint` per task and batch of the batch scan.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
from jax.typing import ArrayLike

from localization import metrics
from localization import validation as v
from localization.field_analysis import LOCALIZED_SHARE, bump_width, localization_share

__all__ = [
    "FieldPaths",
    "field_paths",
    "localization_time",
    "NearZeroPoint",
    "near_zero_summary",
    "BatchPoint",
    "batch_scan_summary",
]


# -------------------------------------------------------------------------------------------------
# SGD fields: share, width and IPR along the runs
# -------------------------------------------------------------------------------------------------
class FieldPaths(NamedTuple):
    """Share, width and IPR of SGD fields at every checkpoint (float64 / int NumPy arrays).

    Attributes
    ----------
    times : (C,) checkpoint times. share, ipr : (..., C). width : (..., C) integers.
    final : (..., N) the last checkpoint's fields, scaled to unit norm.
    """

    times: np.ndarray
    share: np.ndarray
    width: np.ndarray
    ipr: np.ndarray
    final: np.ndarray


def field_paths(path: ArrayLike, times: ArrayLike, n: int) -> FieldPaths:
    """Return :class:`FieldPaths` of weights along runs.

    Parameters
    ----------
    path : ArrayLike
        ``(..., C, N)`` weights at C checkpoints (``IPRSweep.path``), N = n, non-zero.
    times : ArrayLike
        ``(C,)`` checkpoint times.
    n : int
        Ring size.

    Returns
    -------
    FieldPaths
    """
    n = v.integer("n", n, 4)
    w = np.asarray(v.float_array("path", path, ndim_min=2, last_dim=n), dtype=np.float64)
    t = np.asarray(v.float_array("times", times), dtype=np.float64)
    if t.ndim != 1 or t.shape[0] != w.shape[-2]:
        raise ValueError(f"times must have one entry per checkpoint ({w.shape[-2]}), got shape {t.shape}")
    final = w[..., -1, :]
    return FieldPaths(
        times=t,
        share=localization_share(w, n),
        width=bump_width(w, n),
        ipr=np.asarray(metrics.ipr(w), dtype=np.float64),
        final=final / np.linalg.norm(final, axis=-1, keepdims=True),
    )


def localization_time(share: ArrayLike, times: ArrayLike) -> np.ndarray:
    """Return the first checkpoint time from which a field stays localized to the end (NaN: not localized at the end).

    Parameters
    ----------
    share : ArrayLike
        ``(..., C)`` localization shares at the checkpoints.
    times : ArrayLike
        ``(C,)`` checkpoint times, increasing.

    Returns
    -------
    numpy.ndarray
        ``(...)`` times (NaN where the last share is at most the threshold).
    """
    s = np.asarray(v.float_array("share", share), dtype=np.float64)
    t = np.asarray(v.float_array("times", times), dtype=np.float64)
    if t.ndim != 1 or t.shape[0] != s.shape[-1]:
        raise ValueError(f"times must have one entry per checkpoint ({s.shape[-1]}), got shape {t.shape}")
    if np.any(np.diff(t) <= 0):
        raise ValueError("times must be increasing")
    loc = s > LOCALIZED_SHARE
    # index of the first checkpoint of the final run of localized checkpoints
    tail = np.flip(np.cumprod(np.flip(loc, -1), axis=-1), -1).astype(bool)
    first = np.argmax(tail, axis=-1)
    return np.where(loc[..., -1], t[first], np.nan)


# -------------------------------------------------------------------------------------------------
# what a record says
# -------------------------------------------------------------------------------------------------
class NearZeroPoint(NamedTuple):
    """One value of a near-zero record, pooled over its seeds and initialisations (:func:`near_zero_summary`).

    Attributes
    ----------
    family : str; param : float; excess_kurtosis : float.
    times : (C,) checkpoint times.
    share, width, ipr : (S, I, C) over seeds S, initialisations I and checkpoints.
    localized : (S, I) localized at the last checkpoint. fraction : their share of the S × I fields.
    t_loc : (S, I) :func:`localization_time` (NaN where not localized at the end).
    """

    family: str
    param: float
    excess_kurtosis: float
    times: np.ndarray
    share: np.ndarray
    width: np.ndarray
    ipr: np.ndarray
    localized: np.ndarray
    fraction: float
    t_loc: np.ndarray


def near_zero_summary(record: Mapping[str, Any], group: str) -> list[NearZeroPoint]:
    """Return one :class:`NearZeroPoint` per value of a group of a :func:`near_zero_record`.

    Parameters
    ----------
    record : Mapping
        The record (JSON dict) with ``seeds``.
    group : str
        ``"NLGP"``, ``"Kur"``, ``"NLGP_wide"`` or ``"Kur_wide"``.

    Returns
    -------
    list of NearZeroPoint
        In the order of the group's parameters.
    """
    seeds = record.get("seeds") if isinstance(record, Mapping) else None
    if not seeds:
        raise ValueError("record must be a near_zero_record with at least one seed")
    if group not in seeds[0]:
        raise ValueError(f"group must be one of the record's groups, got {group!r}")
    times = np.asarray(seeds[0]["times"], dtype=np.float64)
    g0 = seeds[0][group]
    family = group.removesuffix("_wide")
    out = []
    for p, (param, exk) in enumerate(zip(g0["params"], g0["excess_kurtosis"], strict=True)):
        share = np.array([s[group]["share"][p] for s in seeds], dtype=np.float64)
        width = np.array([s[group]["width"][p] for s in seeds], dtype=np.int64)
        ipr = np.array([s[group]["ipr"][p] for s in seeds], dtype=np.float64)
        localized = share[..., -1] > LOCALIZED_SHARE
        out.append(
            NearZeroPoint(
                family=family,
                param=float(param),
                excess_kurtosis=float(exk),
                times=times,
                share=share,
                width=width,
                ipr=ipr,
                localized=localized,
                fraction=float(localized.mean()),
                t_loc=localization_time(share, times),
            )
        )
    return out


class BatchPoint(NamedTuple):
    """One task at one batch of a batch-scan record, pooled over its seeds (:func:`batch_scan_summary`).

    Attributes
    ----------
    family : str; param : float; batch : int.
    times : (C,) checkpoint times.
    share, width, ipr : (S, I, C) over seeds S, initialisations I and checkpoints.
    """

    family: str
    param: float
    batch: int
    times: np.ndarray
    share: np.ndarray
    width: np.ndarray
    ipr: np.ndarray


def batch_scan_summary(record: Mapping[str, Any]) -> list[BatchPoint]:
    """Return one :class:`BatchPoint` per (task, batch) of a ``near_zero.batch_scan_record``, in its order.

    Parameters
    ----------
    record : Mapping
        The record (JSON dict) with ``seeds``, each holding the same ``runs``.

    Returns
    -------
    list of BatchPoint
    """
    seeds = record.get("seeds") if isinstance(record, Mapping) else None
    if not seeds or "runs" not in seeds[0]:
        raise ValueError("record must be a batch_scan_record with at least one seed")
    times = np.asarray(seeds[0]["times"], dtype=np.float64)
    out = []
    for r, run in enumerate(seeds[0]["runs"]):
        if any((s["runs"][r]["family"], s["runs"][r]["batch"]) != (run["family"], run["batch"]) for s in seeds):
            raise ValueError("record's seeds must hold the same runs in the same order")
        out.append(
            BatchPoint(
                family=run["family"],
                param=float(run["param"]),
                batch=int(run["batch"]),
                times=times,
                share=np.array([s["runs"][r]["share"][0] for s in seeds], dtype=np.float64),
                width=np.array([s["runs"][r]["width"][0] for s in seeds], dtype=np.int64),
                ipr=np.array([s["runs"][r]["ipr"][0] for s in seeds], dtype=np.float64),
            )
        )
    return out
