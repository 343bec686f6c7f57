r"""Experiments of the chapter *Many neurons* (paper §4.4, Figs. 6 and 7, and Fig. 1 right).

Populations of receptive fields learned by the soft committee machine and the two-layer network (paper (M1)).

* :class:`PopulationSettings` — one training configuration (data family and parameter, length-scales,
  input size — an int or a grid shape —, architecture, initialisation and SGD settings); the paper's
  figures are the constants :data:`FIG6_KUR10`, :data:`FIG6_KUR4`, :data:`FIG7_SIGMOID_KUR4`,
  :data:`FIG7_RELU_KUR30` and :data:`FIG1_GRID`.
* :func:`train_population` — train ``settings.inits`` independent initialisations on one data stream
  (vmapped, one ``jit``; the initialisations are sharded over devices by ``train.train_online``) and
  return the fields, readouts and biases at the checkpoints as float64 NumPy arrays.
* :func:`fig6_populations`, :func:`fig7_populations` — the runs behind the chapter's Figs. 6 and 7 (the
  chapter and ``python -m localization figures`` call them with the same keys); :func:`fig6_committee_runs`
  — the Fig. 6 runs with the window share of every final field (:class:`Fig6Runs`).
* :data:`FIG1_CHAPTER`, :func:`read_fig1_record` — Fig. 1 (right) at a scale a chapter can afford, and the
  recorded full-scale run (``benchmarks/record_fig1.py``, about 12 minutes) the book reads.

The same code trains on a ring (``n = 40``) and on a torus (``n = (30, 30)``): the fields are always
stored flattened, (…, K, prod(n)), in the data models' row-major layout.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import DTypeLike

from localization import data, field_analysis, initialisation, models, train, trajectory
from localization import validation as v
from localization.sgd import OnlineSettings

__all__ = [
    "PopulationSettings",
    "PopulationRun",
    "FIG6_KUR10",
    "FIG6_KUR4",
    "FIG7_SIGMOID_KUR4",
    "FIG7_RELU_KUR30",
    "FIG1_GRID",
    "FIG1_CHAPTER",
    "FIG1_RECORD",
    "Fig1Record",
    "read_fig1_record",
    "train_population",
    "fig6_populations",
    "Fig6Runs",
    "fig6_committee_runs",
    "fig1_populations",
    "fig7_populations",
]


@dataclass(frozen=True)
class PopulationSettings:
    """One many-neuron training run (paper (M1), online SGD on the MSE without ½, labels {0, 1}).

    Flat fields (the format the records hold); the run fields (``n``, ``model``, ``activation``,
    ``lr``, ``batch``, ``steps``, ``checkpoints``) are those of :class:`localization.sgd.OnlineSettings`,
    which :attr:`run` builds; the settings are validated when built.

    Attributes
    ----------
    family, param : data family of :func:`localization.data.family_task` ("Kur", "NLGP", "Ising",
        "Gaussian") and its parameter (k, g, J₁, g).
    xi : (ξ₀, ξ₁) length-scales of the two classes.
    n : input size, an int (ring) or a grid shape such as (30, 30) (torus).
    K : hidden units. model : "committee" (readout fixed at 1/K) or "two_layer" (trainable readout).
    activation : "sigmoid", "relu" or "erf". bias : trainable hidden biases (and output bias for
        "two_layer").
    init_scale : variance multiplier of the Xavier initialisation (:func:`localization.initialisation.init_params`).
    lr, batch, steps : SGD learning rate, examples per step, steps. inits : independent
        initialisations (trained on the same data stream). checkpoints : recorded checkpoints (≥ 2).

    Raises
    ------
    TypeError, ValueError
        Naming the field, its value and the valid range.
    """

    family: str = "Kur"
    param: float = 10.0
    xi: tuple[float, float] = (1.0, 3.0)
    n: int | tuple[int, ...] = 40
    K: int = 10
    model: str = "committee"
    activation: str = "sigmoid"
    bias: bool = True
    init_scale: float = 0.1
    lr: float = 100.0
    batch: int = 1000
    steps: int = 5000
    inits: int = 8
    checkpoints: int = 2

    def __post_init__(self) -> None:
        """Validate the fields (the run's by building :attr:`run`)."""
        if self.family not in data.FAMILIES:
            raise ValueError(f"family must be one of {list(data.FAMILIES)}, got {self.family!r}")
        v.real_scalar("param", self.param)
        v.integer("K", self.K, 1)
        if not isinstance(self.bias, bool):
            raise TypeError(f"bias must be a bool, got {self.bias!r}")
        v.positive("init_scale", self.init_scale)
        v.integer("inits", self.inits, 1)
        models.check_architecture(self.model, self.activation)
        if self.model == "neuron":
            raise ValueError("model must be 'committee' or 'two_layer' (many neurons), got 'neuron'")
        v.integer("checkpoints", self.checkpoints, 2)
        v.shape("n", self.n, minimum=2)
        self.run  # noqa: B018 -- validates the run fields

    @property
    def run(self) -> OnlineSettings:
        """The :class:`~localization.sgd.OnlineSettings` of the run (float32)."""
        return OnlineSettings(
            lr=self.lr,
            batch=self.batch,
            steps=self.steps,
            checkpoints=self.checkpoints,
            n=self.n,
            model=self.model,
            activation=self.activation,
        )

    def replace(self, **changes: Any) -> PopulationSettings:
        """Return a copy with some fields changed (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)

    @property
    def shape(self) -> tuple[int, ...]:
        """The input shape as a tuple ((N,) for a ring)."""
        return v.shape("n", self.n, minimum=2)

    @property
    def N(self) -> int:
        """Number of input sites prod(n)."""
        return math.prod(self.shape)

    def task(self) -> data.LengthscaleTask:
        """Return the length-scale task these settings train on."""
        return data.family_task(self.family, self.param, self.xi)


#: Paper Fig. 6 (left): SCM, sigmoid, K = 10, N = 40, trainable bias, init 0.1, lr 100, batch 1000,
#: 5000 steps, on Kur(10) (platykurtic: the single-neuron rule predicts localization).
FIG6_KUR10 = PopulationSettings()
#: Paper Fig. 6 (centre): the same on Kur(4) (heavy-tailed: no localization predicted).
FIG6_KUR4 = FIG6_KUR10.replace(param=4.0)
#: Paper Fig. 7 (top): two-layer network with trainable readout and biases, sigmoid, K = 10, init 0.001,
#: lr 80, batch 1000, 5000 steps, on Kur(4) (``figures/fig5.ipynb`` of the paper's code, the cell that
#: writes ``fig6/10erf_alg4``).
FIG7_SIGMOID_KUR4 = FIG6_KUR10.replace(model="two_layer", param=4.0, init_scale=0.001, lr=80.0)
#: Paper Fig. 7 (bottom): the same network with ReLU and K = 100 (the caption says K = 10), init 0.001,
#: lr 0.5, batch 5000, 2000 steps, on Kur(30) (the cell that writes ``fig6/10erf_alg30``).
FIG7_RELU_KUR30 = FIG6_KUR10.replace(
    model="two_layer", activation="relu", param=30.0, K=100, init_scale=0.001, lr=0.5, batch=5000, steps=2000
)
#: Paper Fig. 1 (right): SCM on NLGP(100) over a 30 × 30 torus, ξ = (1, 2), K = 20, ReLU, no bias,
#: init 0.01, lr 3, batch 10 000, 10 000 steps.
FIG1_GRID = PopulationSettings(
    family="NLGP",
    param=100.0,
    xi=(1.0, 2.0),
    n=(30, 30),
    K=20,
    activation="relu",
    bias=False,
    init_scale=0.01,
    lr=3.0,
    batch=10_000,
    steps=10_000,
    inits=1,
)
#: Fig. 1 (right) at chapter scale: the same model and data on a 20 × 20 torus, batch 1000, 5000 steps, 11
#: checkpoints (about 25 CPU-seconds; the fields localize by step 2000 — chapter *Receptive fields in two
#: dimensions*).
FIG1_CHAPTER = FIG1_GRID.replace(n=(20, 20), batch=1000, steps=5000, checkpoints=11)
#: Where ``benchmarks/record_fig1.py`` writes the full-scale run of :data:`FIG1_GRID`.
FIG1_RECORD = Path(__file__).resolve().parents[2] / "book" / "data" / "fig1_full_scale.npz"


class PopulationRun(NamedTuple):
    """Receptive fields of ``inits`` trained networks at C checkpoints (float64 NumPy copies).

    Attributes
    ----------
    settings : the :class:`PopulationSettings` used.
    times : (C,) checkpoint times ``steps × lr``.
    fields : (I, C, K, N) first-layer weights (row k of ``fields[i, c]`` is unit k's receptive field
        over the flattened input, N = prod(n)).
    readout : (I, C, K) readout weights ``a`` ("two_layer"), or ``None`` (SCM: fixed at 1/K).
    bias : (I, C, K) hidden biases, or ``None``.
    diverged : (I,) bool, True where SGD diverged: that initialisation's parameters contain NaN or inf
        (they are kept as SGD left them and flagged here — at the paper's learning rates some settings
        diverge, which is a result, not an error; :attr:`converged_final` drops them).
    """

    settings: PopulationSettings
    times: np.ndarray
    fields: np.ndarray
    readout: np.ndarray | None
    bias: np.ndarray | None
    diverged: np.ndarray

    @property
    def final(self) -> np.ndarray:
        """(I, K, N) fields at the last checkpoint (NaN for diverged initialisations, see ``diverged``)."""
        return self.fields[:, -1]

    @property
    def converged_final(self) -> np.ndarray:
        """(I', K, N) fields at the last checkpoint of the I' initialisations that did not diverge."""
        return self.fields[~self.diverged, -1]


class Fig1Record(NamedTuple):
    """The recorded full-scale run of :data:`FIG1_GRID` (``benchmarks/record_fig1.py``).

    Attributes
    ----------
    fields, initial : (K, N) learned fields at the last step and at step 0 (N = 900, row-major 30 × 30).
    steps : (C,) checkpoint steps. share : (C, K) box share (``meta["box"]``-site square,
        :func:`localization.field_analysis.window_share`) of every field at every checkpoint.
    ipr : (C, K) IPR of every field at every checkpoint. meta : dict (command, settings, key, wall and CPU
        seconds, machine, jax version, date).
    """

    fields: np.ndarray
    initial: np.ndarray
    steps: np.ndarray
    share: np.ndarray
    ipr: np.ndarray
    meta: dict[str, Any]

    @property
    def settings(self) -> PopulationSettings:
        """The :class:`PopulationSettings` of the recorded run (tuples restored)."""
        fields = {k: tuple(x) if isinstance(x, list) else x for k, x in self.meta["settings"].items()}
        return PopulationSettings(**fields)


def read_fig1_record(path: str | Path = FIG1_RECORD) -> Fig1Record:
    """Read the full-scale Fig. 1 (right) record at ``path`` (default :data:`FIG1_RECORD`).

    A missing file raises ``FileNotFoundError`` naming the command that writes it.

    Parameters
    ----------
    path : str or Path
        The record (default :data:`FIG1_RECORD`).

    Returns
    -------
    Fig1Record
        The recorded run (see :class:`Fig1Record`).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found; write it with: .venv/bin/python benchmarks/record_fig1.py {path}")
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: np.asarray(z[k]) for k in ("fields", "initial", "steps", "share", "ipr")}
        meta = json.loads(str(z["meta"]))
    arrays = {k: a.astype(np.int64) if k == "steps" else a.astype(np.float64) for k, a in arrays.items()}
    return Fig1Record(**arrays, meta=meta)


def _as_numpy(leaf):
    return None if leaf is None else np.asarray(leaf, np.float64)


def train_population(
    key: jax.Array,
    settings: PopulationSettings,
    *,
    params: models.Params | None = None,
    task: data.LengthscaleTask | None = None,
    dtype: DTypeLike = jnp.float32,
) -> PopulationRun:
    """Train ``settings.inits`` initialisations of the many-neuron model ``settings`` describes.

    The initialisations come from ``fold_in(key, 0)`` (:func:`localization.initialisation.init_params`), the
    data stream from ``fold_in(key, 1)`` (:func:`localization.train.train_online`), so a run is a
    function of the key and the settings only. ``params`` replaces the drawn initialisations by given
    ones (:class:`localization.models.Params` with a leading axis of length ``settings.inits``), e.g.
    the shifted initialisations of :mod:`localization.experiments.specialisation`. ``task`` replaces the
    task that ``settings.family``, ``param`` and ``xi`` name by any length-scale task (for example an
    elliptical law, which :func:`localization.data.family_task` does not name).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    settings : PopulationSettings
        The training configuration.
    params : models.Params or None
        Initialisations to use instead of drawing them.
    task : data.LengthscaleTask or None
        The task to train on instead of ``settings.task()``.
    dtype : DTypeLike
        Training dtype.

    Returns
    -------
    PopulationRun
        Fields (I, C, K, N), readout, bias and divergence flags at the C checkpoints.
    """
    key = v.key("key", key)
    if not isinstance(settings, PopulationSettings):
        raise TypeError(f"settings must be a PopulationSettings, got {type(settings).__name__}")
    if task is None:
        task = settings.task()
    elif not isinstance(task, data.LengthscaleTask):
        raise TypeError(f"task must be a data.LengthscaleTask or None, got {type(task).__name__}")
    if params is None:
        params = initialisation.init_params(
            jax.random.fold_in(key, 0),
            settings.K,
            settings.shape,
            settings.init_scale,
            model=settings.model,
            bias=settings.bias,
            num=settings.inits,
            dtype=dtype,
        )
    elif not isinstance(params, models.Params) or params.w.shape != (settings.inits, settings.K, settings.N):
        got = params.w.shape if isinstance(params, models.Params) else type(params).__name__
        raise ValueError(
            f"params must be Params with w of shape (inits, K, N) = {(settings.inits, settings.K, settings.N)}, "
            f"got {got}"
        )
    traj = train.train_online(jax.random.fold_in(key, 1), task, params, OnlineSettings.of(settings.run, dtype=dtype))
    p = traj.weights
    return PopulationRun(
        settings=settings,
        times=np.asarray(traj.times, np.float64),
        fields=np.asarray(p.w, np.float64),
        readout=_as_numpy(p.a),
        bias=_as_numpy(p.b),
        diverged=trajectory.diverged(p, axes=1),  # w, and b, a, c where present
    )


def fig6_populations(key: jax.Array, **changes: Any) -> dict[str, PopulationRun]:
    """Train the populations of paper Fig. 6 (left, centre): the SCM on Kur(10) and on Kur(4).

    Settings :data:`FIG6_KUR10`, :data:`FIG6_KUR4`, with ``changes`` applied to both; keys
    ``fold_in(key, 0)`` and ``fold_in(key, 1)``.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    **changes
        Fields of the settings to change (e.g. ``steps``, ``inits``).

    Returns
    -------
    dict[str, PopulationRun]
        One run per data model, by name.
    """
    settings = {"Kur(10)": FIG6_KUR10.replace(**changes), "Kur(4)": FIG6_KUR4.replace(**changes)}
    return {name: train_population(jax.random.fold_in(key, j), s) for j, (name, s) in enumerate(settings.items())}


class Fig6Runs(NamedTuple):
    """The runs of paper Fig. 6 (left, centre) and their window shares (:func:`fig6_committee_runs`).

    Attributes
    ----------
    runs : dict of str to PopulationRun
        "Kur(10)", "Kur(4)" → the committee machines (:func:`fig6_populations`).
    shares : dict of str to numpy.ndarray, each (I, K)
        The share of every final field in its best window
        (:func:`localization.field_analysis.localization_share`; localized above
        :data:`localization.field_analysis.LOCALIZED_SHARE`).
    """

    runs: dict[str, PopulationRun]
    shares: dict[str, np.ndarray]


def fig6_committee_runs(key: jax.Array, **changes: Any) -> Fig6Runs:
    """Train :func:`fig6_populations` from ``key`` and measure the window share of every final field.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    **changes
        Fields of the settings to change, as in :func:`fig6_populations`.

    Returns
    -------
    Fig6Runs
        The runs and the shares (I, K) by data model.
    """
    runs = fig6_populations(key, **changes)
    shares = {name: np.asarray(field_analysis.localization_share(r.final, r.settings.n)) for name, r in runs.items()}
    return Fig6Runs(runs, shares)


def fig1_populations(key: jax.Array, **changes: Any) -> dict[str, PopulationRun]:
    """Train paper Fig. 1 (right) at chapter scale (:data:`FIG1_CHAPTER`, with ``changes``) on NLGP(100).

    Also trains, as the near-Gaussian control with the same initialisation and data stream, on NLGP(0.01).

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    **changes
        Fields of the settings to change (e.g. ``steps``, ``inits``).

    Returns
    -------
    dict[str, PopulationRun]
        One run per data model, by name.
    """
    settings = FIG1_CHAPTER.replace(**changes)
    return {
        name: train_population(key, settings.replace(param=g))
        for name, g in (("NLGP(100)", 100.0), ("NLGP(0.01)", 0.01))
    }


def fig7_populations(key: jax.Array, *, lr_top: float = 20.0, inits_bottom: int = 2) -> dict[str, PopulationRun]:
    """Train the populations of paper Fig. 7.

    The two-layer sigmoid network on Kur(4) and, as a control with the same key
    (initialisations and data stream), on Kur(10), at learning rate ``lr_top`` (at the paper's 80 many
    networks diverge: more than a quarter within 250 steps in every run of the chapter); the two-layer ReLU
    network with K = 100 on Kur(30) at the paper's settings
    (``inits_bottom`` initialisations, key ``fold_in(key, 1)``). Keys: ``fold_in(key, 0)`` for the top row.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key.
    lr_top : float
        Learning rate of the two-layer sigmoid networks (top row).
    inits_bottom : int
        Initialisations of the two-layer ReLU network (bottom row).

    Returns
    -------
    dict[str, PopulationRun]
        One run per panel, by name.
    """
    top = FIG7_SIGMOID_KUR4.replace(lr=v.positive("lr_top", lr_top))
    k_top = jax.random.fold_in(key, 0)
    return {
        "Kur(4)": train_population(k_top, top),
        "Kur(10)": train_population(k_top, top.replace(param=10.0)),
        "Kur(30)": train_population(jax.random.fold_in(key, 1), FIG7_RELU_KUR30.replace(inits=inits_bottom)),
    }
