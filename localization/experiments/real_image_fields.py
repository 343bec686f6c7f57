r"""Receptive fields learned on the two photographs: single neuron, committee machine and FastICA, and their shapes.

One data set is a (photograph, preprocessing, shape) of :mod:`localization.data.images`: rows of N
pixels or (h, w) patches, z-scored and sign-symmetrised by
:class:`~localization.data.empirical.EmpiricalModel` and put on a ring (torus) by random cyclic shifts
(:class:`~localization.data.ring.RingModel`, so that S2 holds exactly). The task is
always the *clone* task (:class:`~localization.data.empirical.CloneTask`): the rows against their
Gaussian clone, Σ₀ = Σ₁, so only the higher-order statistics separate the classes and the paper's
amplifier φ alone can select a field (:mod:`localization.experiments.real_images`).

On it :func:`run_fields` trains, from explicit keys and with the library's trainer
(:func:`localization.train.train_online`, one data stream shared by every start):

* the single ReLU neuron (paper (M2)) from ``neuron_inits`` Xavier-normal starts;
* the soft committee machine of the book's chapter *Many neurons* and *Receptive fields in two
  dimensions* (:func:`localization.models.committee`, ReLU units, no bias, readout fixed at 1/K), K
  units, ``committee_inits`` starts (:func:`localization.initialisation.init_params`). Its step is K
  times the neuron's: the 1/K readout scales each unit's gradient by 1/K, so each unit then moves at
  the neuron's rate while the output is small, and the two runs take the same number of steps
  (:func:`localization.experiments.many_neurons.train_population` does the same for length-scale
  tasks only: it refuses a ``CloneTask``);

and fits FastICA (:func:`localization.experiments.ica.fit_ica`, scikit-learn) to samples of the same
law, with one component per direction of the data's covariance whose variance exceeds
:data:`localization.data.images.WHITENING_FLOOR` times the largest (the floor of the whitening
preprocessing): FastICA whitens by dividing by the square root of each variance, and a direction of
(nearly) no variance — the constant of centred and whitened rows, the frequencies JPEG removed from
raw ones — would be blown up into every filter (with all N components on whitened rows every filter
is the constant, share exactly 1/4).
:func:`chapter_fields` does this for the chapter's grid of data sets.

**Shapes of a field** (:func:`field_shapes`; a field is flattened, (..., N), on the periodic grid):

``localized``, ``share``
    the book's one definition, :func:`localization.field_analysis.is_localized`, and its share.
``size``
    the radius of gyration of :math:`w^2` about its centre, :math:`\sqrt{\sum_x w_x^2 d(x,c)^2/\|w\|^2}`
    with periodic distances d (sites); a Gaussian envelope :math:`e^{-|x|^2/2\sigma^2}` has size σ.
    The centre c is the circular mean of :math:`w^2` along each axis.
``frequency``
    the mean :math:`|k|` (cycles per site) of the power :math:`|\hat w(k)|^2` over the waves k ≠ 0.
``phase``
    even or odd about the centre: with :math:`w_\pm(x)=\tfrac12(w(c+x)\pm w(c-x))` (c rounded to the
    nearest half site, so the reflection maps the grid onto itself),
    :math:`\arctan(\|w_-\|/\|w_+\|)` in degrees, 0 for an even field (a cosine Gabor, a blob), 90 for
    an odd one (a sine Gabor); a Gabor of carrier phase ψ gives :math:`|\psi|` folded into [0, 90] up to terms
    of order :math:`e^{-(k\sigma)^2}`.
``orientation``, ``selectivity`` (2-D only)
    the power's concentration over the angle of the wave vector: with
    :math:`R=\sum_{k\ne0}|\hat w(k)|^2e^{2\mathrm i\theta_k}/\sum_{k\ne0}|\hat w(k)|^2` (the doubled
    angle identifies k with -k), orientation :math:`\tfrac12\arg R` in degrees in (-90, 90] and
    selectivity :math:`|R|` in [0, 1] (one minus the circular variance of the power over orientation):
    1 for a plane wave, 0 for a field whose power is unchanged by a quarter turn (an isotropic blob on
    a square grid). θ is the angle of the wave vector from the column axis (x, axis 1) toward the row
    axis (y, axis 0, downward in an image): the direction in which the field oscillates; its stripes
    run perpendicular to it. On an even axis the Nyquist wave has no sign, so its power counts half
    at each sign. :func:`selectivity_null` gives the selectivity of fields of i.i.d. Gaussian noise on
    the same grid; :data:`ORIENTED_LEVEL` of them lie below :attr:`FieldExperiment.oriented_threshold`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from localization import field_analysis, initialisation, train
from localization import validation as v
from localization.data import images
from localization.data.empirical import MIN_SAMPLES, CloneTask, EmpiricalModel
from localization.data.ring import RingModel
from localization.experiments import ica
from localization.experiments.real_images import image_samples

__all__ = [
    "ORIENTED_LEVEL",
    "CHAPTER_SHAPES",
    "CHAPTER_PREPROCESSINGS",
    "FieldShapes",
    "field_shapes",
    "selectivity_null",
    "FieldSettings",
    "LearnedFields",
    "FieldExperiment",
    "run_fields",
    "chapter_fields",
    "RECORD",
    "RECORD_COMMAND",
    "fields_record",
]

#: Share of i.i.d. Gaussian fields whose selectivity lies below the "oriented" threshold.
ORIENTED_LEVEL = 0.95
#: The input shapes of the chapter: rows of 40 pixels and 8 x 8 patches.
CHAPTER_SHAPES = ((40,), (8, 8))
#: The preprocessings of the chapter: the pixels as they are, and whitened.
CHAPTER_PREPROCESSINGS = ("raw", "whitened")


# --------------------------------------------------------------------------------------------
# shapes of fields
# --------------------------------------------------------------------------------------------
class FieldShapes(NamedTuple):
    """Shape measures of F fields (:func:`field_shapes`; module docstring), each (F,) float64 or bool.

    ``localized`` and ``share`` (:func:`localization.field_analysis.is_localized`), ``size`` (sites),
    ``frequency`` (cycles per site), ``phase`` (degrees, 0 even to 90 odd), ``orientation``
    (degrees in (-90, 90]) and ``selectivity`` ([0, 1]), the last two None for rows (1-D).
    """

    localized: np.ndarray
    share: np.ndarray
    size: np.ndarray
    frequency: np.ndarray
    phase: np.ndarray
    orientation: np.ndarray | None
    selectivity: np.ndarray | None


def _grid_fields(w: Any, shape: Any) -> tuple[np.ndarray, tuple[int, ...]]:
    grid = v.shape("shape", shape, minimum=4)
    if len(grid) > 2:
        raise ValueError(f"shape must be (N,) or (h, w), got {shape!r}")
    w = v.finite_real_array("w", w)
    if w.ndim < 1 or w.shape[-1] != math.prod(grid):
        raise ValueError(f"w must have last axis prod(shape) = {math.prod(grid)}, got shape {w.shape}")
    if np.any(np.sum(w**2, axis=-1) == 0):
        raise ValueError("w must be non-zero fields (every field has a positive norm)")
    return w.reshape(-1, *grid), grid


def _centre(power: np.ndarray, grid: tuple[int, ...]) -> list[np.ndarray]:
    """(F,) circular mean position of ``power`` (F, *grid) along every axis, in [0, n)."""
    out = []
    for axis, n in enumerate(grid):
        other = tuple(a + 1 for a in range(len(grid)) if a != axis)
        marginal = power.sum(axis=other)  # (F, n)
        phase = np.angle(marginal @ np.exp(2j * np.pi * np.arange(n) / n))
        out.append(np.mod(phase * n / (2 * np.pi), n))
    return out


def _reflect(fields: np.ndarray, grid: tuple[int, ...], centre: list[np.ndarray]) -> np.ndarray:
    """Each field (F, *grid) reflected through its centre rounded to the nearest half site."""
    out = np.empty_like(fields)
    for f in range(fields.shape[0]):
        index = tuple((int(np.round(2 * centre[a][f])) - np.arange(n)) % n for a, n in enumerate(grid))
        out[f] = fields[f][np.ix_(*index)]
    return out


def _rotor(grid: tuple[int, int]) -> np.ndarray:
    """exp(2i θ_k) of every wave of ``fftn`` on an (h, w) grid, averaged over the sign of a Nyquist component."""
    ky, kx = np.meshgrid(*[np.fft.fftfreq(n) for n in grid], indexing="ij")
    nyquist = [np.isclose(np.abs(k), 0.5) for k in (ky, kx)]  # only on an even axis
    total = np.zeros(grid, complex)
    for sy in (1.0, -1.0):
        for sx in (1.0, -1.0):
            # a sign flip counts only where that component is a Nyquist wave (elsewhere it is another wave)
            use = (nyquist[0] if sy < 0 else True) & (nyquist[1] if sx < 0 else True)
            total += np.where(use, np.exp(2j * np.arctan2(sy * ky, sx * kx)), 0.0)
    count = (1 + nyquist[0]) * (1 + nyquist[1])
    return total / count


def field_shapes(w: Any, shape: int | tuple[int, ...]) -> FieldShapes:
    """Return the shape measures of fields on a ring or torus (module docstring).

    Parameters
    ----------
    w : array_like
        (..., N) finite non-zero fields, N = prod(shape), row-major over the grid.
    shape : int or tuple of int
        N (a ring) or (h, w) (a torus), every axis >= 4.

    Returns
    -------
    FieldShapes
        Every entry of shape ``w.shape[:-1]``.
    """
    fields, grid = _grid_fields(w, shape)
    lead = np.shape(w)[:-1]
    flat = fields.reshape(fields.shape[0], -1)
    norm2 = np.sum(flat**2, axis=1)
    power = fields**2
    centre = _centre(power, grid)
    axes = tuple(range(1, len(grid) + 1))
    distance2 = np.zeros_like(fields)
    for axis, n in enumerate(grid):
        d = np.mod(np.arange(n)[None, :] - centre[axis][:, None] + n / 2, n) - n / 2  # (F, n)
        distance2 += d.reshape(d.shape[0], *[n if a == axis else 1 for a in range(len(grid))]) ** 2
    size = np.sqrt(np.sum(power * distance2, axis=axes) / norm2)
    mirrored = _reflect(fields, grid, centre)
    odd = np.linalg.norm((fields - mirrored).reshape(len(flat), -1), axis=1)
    even = np.linalg.norm((fields + mirrored).reshape(len(flat), -1), axis=1)
    phase = np.degrees(np.arctan2(odd, even))
    spectrum = np.abs(np.fft.fftn(fields, axes=axes)) ** 2
    spectrum[(slice(None),) + (0,) * len(grid)] = 0.0  # the mean has no frequency nor orientation
    ac = np.sum(spectrum, axis=axes)
    freqs = np.meshgrid(*[np.fft.fftfreq(n) for n in grid], indexing="ij")
    radius = np.sqrt(sum(f**2 for f in freqs))
    frequency = np.divide(np.sum(spectrum * radius, axis=axes), ac, out=np.zeros_like(ac), where=ac > 0)
    orientation = selectivity = None
    if len(grid) == 2:
        rotor = _rotor(grid)
        resultant = np.divide(np.sum(spectrum * rotor, axis=axes), ac, out=np.zeros(len(flat), complex), where=ac > 0)
        selectivity = np.abs(resultant)
        angle = 0.5 * np.degrees(np.angle(resultant))
        orientation = np.where(angle <= -90.0, angle + 180.0, angle)
        orientation, selectivity = orientation.reshape(lead), selectivity.reshape(lead)
    return FieldShapes(
        localized=np.asarray(field_analysis.is_localized(flat, grid if len(grid) > 1 else grid[0])).reshape(lead),
        share=np.asarray(field_analysis.localization_share(flat, grid if len(grid) > 1 else grid[0])).reshape(lead),
        size=size.reshape(lead),
        frequency=frequency.reshape(lead),
        phase=phase.reshape(lead),
        orientation=orientation,
        selectivity=selectivity,
    )


def selectivity_null(key: jax.Array, shape: tuple[int, int], num: int = 4000) -> np.ndarray:
    """Return the sorted orientation selectivities of ``num`` fields of i.i.d. standard Gaussian noise.

    Parameters
    ----------
    key : jax.Array
        PRNG key of the noise.
    shape : tuple of int
        (h, w), both >= 4.
    num : int
        Number of fields, >= 20.

    Returns
    -------
    np.ndarray
        (num,) ascending, in [0, 1].
    """
    key = v.key("key", key)
    grid = v.shape("shape", shape, minimum=4)
    if len(grid) != 2:
        raise ValueError(f"shape must be (h, w) (orientation is defined in 2-D), got {shape!r}")
    num = v.integer("num", num, 20)
    noise = np.asarray(jax.random.normal(key, (num, math.prod(grid)), jnp.float32), np.float64)
    return np.sort(field_shapes(noise, grid).selectivity)


# --------------------------------------------------------------------------------------------
# settings and runs
# --------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class FieldSettings:
    """One data set and the settings of the three learners (:func:`run_fields`).

    Attributes
    ----------
    image, preprocessing : str
        One of :data:`localization.data.images.IMAGE_NAMES` and of
        :data:`localization.data.images.PREPROCESSINGS`.
    shape : tuple of int
        (N,) rows or (h, w) patches, every axis >= 4 (an int N is stored as (N,)).
    samples : int
        Rows (patches) drawn, >= :data:`localization.data.empirical.MIN_SAMPLES`.
    neuron_inits : int
        Starts of the single neuron, >= 1.
    K : int
        Units of the committee machine, >= 1.
    committee_inits : int
        Starts of the committee machine, >= 1.
    init_scale : float
        Variance multiplier of the Xavier-normal starts of both networks (> 0).
    max_lr : float
        The neuron's largest step (> 0); its step is ``min(max_lr, 1/λ_max)``, λ_max the largest
        eigenvalue of the data's covariance (as :func:`localization.experiments.real_images.build_task`);
        the committee's is K times that.
    sgd_time : float
        Duration of the neuron's run (steps x lr, > 0); the committee takes the same number of steps.
    batch : int
        SGD examples per step, >= 1.
    checkpoints : int
        Evenly spaced checkpoints of both runs including t = 0, >= 3.
    ica_samples : int
        Samples of the FastICA fit, > prod(shape) (it fits prod(shape) components).
    """

    image: str = "china.jpg"
    preprocessing: str = "raw"
    shape: tuple[int, ...] = (40,)
    samples: int = 10_000
    neuron_inits: int = 4
    K: int = 8
    committee_inits: int = 1
    init_scale: float = 1e-3
    max_lr: float = 0.05
    sgd_time: float = 100.0
    batch: int = 500
    checkpoints: int = 5
    ica_samples: int = 10_000

    def __post_init__(self) -> None:
        """Validate every field (naming it, its value and the valid range) and normalise ``shape``."""
        put = functools.partial(object.__setattr__, self)
        put("shape", images.check_data_set(self.image, self.preprocessing, self.shape))
        put("samples", v.integer("samples", self.samples, MIN_SAMPLES))
        put("neuron_inits", v.integer("neuron_inits", self.neuron_inits, 1))
        put("K", v.integer("K", self.K, 1))
        put("committee_inits", v.integer("committee_inits", self.committee_inits, 1))
        put("init_scale", v.positive("init_scale", self.init_scale))
        put("max_lr", v.positive("max_lr", self.max_lr))
        put("sgd_time", v.positive("sgd_time", self.sgd_time))
        put("batch", v.integer("batch", self.batch, 1))
        put("checkpoints", v.integer("checkpoints", self.checkpoints, 3))
        put("ica_samples", v.integer("ica_samples", self.ica_samples, math.prod(self.shape) + 1))

    def replace(self, **changes: Any) -> FieldSettings:
        """Return a copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    @property
    def n(self) -> int | tuple[int, int]:
        """The input size as the library takes it: N for rows, (h, w) for patches."""
        return self.shape[0] if len(self.shape) == 1 else self.shape

    @property
    def label(self) -> str:
        """A short name, e.g. ``"china.jpg raw (40,)"``."""
        return f"{self.image} {self.preprocessing} {self.shape}"


class LearnedFields(NamedTuple):
    """The final fields of one learner and their shapes.

    ``fields`` (F, N): the neuron's starts, the committee's units of every start (start-major), or
    the ICA filters; ``shapes`` :class:`FieldShapes` of them; ``counts`` (C,) localized fields at each
    checkpoint (ICA: one entry); ``settled``: ``counts`` is the same at every checkpoint of the second
    half (ICA: the fit converged); ``lr`` and ``steps`` of the run (ICA: 0.0 and the iterations).
    """

    fields: np.ndarray
    shapes: FieldShapes
    counts: np.ndarray
    settled: bool
    lr: float
    steps: int

    @property
    def count(self) -> int:
        """The number of localized final fields."""
        return int(np.sum(self.shapes.localized))


class FieldExperiment(NamedTuple):
    """What :func:`run_fields` returns for one data set.

    ``settings``; ``excess_kurtosis`` of the pooled standardised marginal and ``predicted`` (it is
    negative: the paper's sign rule predicts localized fields); ``neighbour_correlation`` (on the
    ring); ``neuron``, ``committee``, ``ica`` (:class:`LearnedFields`); ``oriented_threshold`` the
    :data:`ORIENTED_LEVEL` quantile of :func:`selectivity_null` on the grid (None for rows).
    """

    settings: FieldSettings
    excess_kurtosis: float
    predicted: bool
    neighbour_correlation: float
    neuron: LearnedFields
    committee: LearnedFields
    ica: LearnedFields
    oriented_threshold: float | None


def _learned(weights: np.ndarray, settings: FieldSettings, lr: float, steps: int) -> LearnedFields:
    """``weights`` (F, C, N) float64 along the run: the final fields' shapes and the counts per checkpoint."""
    if not np.all(np.isfinite(weights)):
        raise ValueError(f"SGD diverged on {settings.label} (non-finite weights); lower max_lr")
    localized = np.asarray(field_analysis.is_localized(weights, settings.n))  # (F, C)
    counts = localized.sum(axis=0)
    half = (len(counts) - 1) // 2
    return LearnedFields(
        fields=weights[:, -1],
        shapes=field_shapes(weights[:, -1], settings.shape),
        counts=counts,
        settled=bool(np.all(counts[half:] == counts[-1])),
        lr=float(lr),
        steps=int(steps),
    )


def run_fields(key: jax.Array, settings: FieldSettings) -> FieldExperiment:
    """Train the neuron and the committee on the clone task of one data set and fit FastICA to it.

    Keys: the positions of the rows (patches) ``fold_in(key, 0)``; the neuron's starts
    ``fold_in(key, 1)``; the committee's ``fold_in(key, 2)``; the SGD data stream ``fold_in(key, 3)``
    (the same for both networks); the ICA samples and start ``fold_in(key, 4)``; the noise of
    :func:`selectivity_null` ``fold_in(key, 5)``.

    Parameters
    ----------
    key : jax.Array
        PRNG key.
    settings : FieldSettings

    Returns
    -------
    FieldExperiment
    """
    key = v.key("key", key)
    if not isinstance(settings, FieldSettings):
        raise TypeError(f"settings must be a FieldSettings, got {type(settings).__name__}")
    v.require_float64("run_fields (the FastICA samples)", np.float64)
    n, N = settings.n, math.prod(settings.shape)
    x = image_samples(
        jax.random.fold_in(key, 0), settings.image, settings.preprocessing, settings.shape, settings.samples
    )
    model = RingModel(EmpiricalModel.of(x, settings.shape, name=f"{settings.image} {settings.preprocessing}"))
    task = CloneTask(model)
    cov = np.asarray(model.covariance(n), np.float64)
    eigenvalues = np.linalg.eigvalsh(cov)
    lr = min(settings.max_lr, 1.0 / float(eigenvalues[-1]))
    steps = max(1, round(settings.sgd_time / lr))
    stream = jax.random.fold_in(key, 3)
    common = dict(batch=settings.batch, steps=steps, checkpoints=settings.checkpoints, n=n)

    w0 = initialisation.init_weights(
        jax.random.fold_in(key, 1), n, settings.init_scale, num=settings.neuron_inits, dtype=jnp.float32
    )
    run = train.train_online(stream, task, w0, lr=lr, **common)
    neuron = _learned(np.asarray(run.weights, np.float64), settings, lr, steps)

    K = settings.K
    params = initialisation.init_params(
        jax.random.fold_in(key, 2),
        K,
        n,
        settings.init_scale,
        model="committee",
        num=settings.committee_inits,
        dtype=jnp.float32,
    )
    run = train.train_online(stream, task, params, lr=K * lr, model="committee", activation="relu", **common)
    w = np.asarray(run.weights.w, np.float64)  # (I, C, K, N)
    w = np.moveaxis(w, 2, 1).reshape(settings.committee_inits * K, w.shape[1], N)
    committee = _learned(w, settings, K * lr, steps)

    # components: the directions with variance above the whitening floor of the preprocessings; FastICA's
    # own whitening divides by the square root of each variance and would blow the near-null ones (the
    # constant of centred and whitened rows, the JPEG-dead frequencies of raw ones) up into every filter
    rank = int(np.sum(eigenvalues > images.WHITENING_FLOOR * eigenvalues[-1]))
    fit = ica.fit_ica(jax.random.fold_in(key, 4), model, rank, num=settings.ica_samples, n=n)
    ica_shapes = field_shapes(fit.filters, settings.shape)
    independent = LearnedFields(
        fit.filters, ica_shapes, np.array([int(ica_shapes.localized.sum())]), fit.converged, 0.0, fit.n_iter
    )
    threshold = None
    if len(settings.shape) == 2:
        null = selectivity_null(jax.random.fold_in(key, 5), settings.shape)
        threshold = float(np.quantile(null, ORIENTED_LEVEL))
    kurtosis = float(model.marginal.excess_kurtosis)
    return FieldExperiment(
        settings=settings,
        excess_kurtosis=kurtosis,
        predicted=kurtosis < 0,
        neighbour_correlation=float(model.neighbour_correlation),
        neuron=neuron,
        committee=committee,
        ica=independent,
        oriented_threshold=threshold,
    )


def chapter_fields(
    key: jax.Array,
    *,
    images_: tuple[str, ...] = images.IMAGE_NAMES,
    preprocessings: tuple[str, ...] = CHAPTER_PREPROCESSINGS,
    shapes: tuple[tuple[int, ...], ...] = CHAPTER_SHAPES,
    **changes: Any,
) -> dict[tuple[str, str, tuple[int, ...]], FieldExperiment]:
    """Run :func:`run_fields` on every (image, preprocessing, shape) of the chapter.

    The data set at position (i, j, s) of the three tuples uses ``fold_in(fold_in(fold_in(key, i), j), s)``.

    Parameters
    ----------
    key : jax.Array
        PRNG key.
    images_, preprocessings, shapes : tuple
        Non-empty tuples of photographs, preprocessings and shapes.
    **changes
        Fields of :class:`FieldSettings` other than image, preprocessing and shape.

    Returns
    -------
    dict
        ``(image, preprocessing, shape)`` -> :class:`FieldExperiment`.
    """
    key = v.key("key", key)
    for name, value in (("images_", images_), ("preprocessings", preprocessings), ("shapes", shapes)):
        if not isinstance(value, tuple) or not value:
            raise TypeError(f"{name} must be a non-empty tuple, got {value!r}")
    forbidden = {"image", "preprocessing", "shape"} & set(changes)
    if forbidden:
        raise TypeError(f"changes must not set {sorted(forbidden)}; pass images_, preprocessings, shapes")
    out = {}
    for i, image in enumerate(images_):
        for j, preprocessing in enumerate(preprocessings):
            for s, shape in enumerate(shapes):
                settings = FieldSettings(image=image, preprocessing=preprocessing, shape=shape, **changes)
                k = jax.random.fold_in(jax.random.fold_in(jax.random.fold_in(key, i), j), s)
                out[(image, preprocessing, settings.shape)] = run_fields(k, settings)
    return out


# --------------------------------------------------------------------------------------------
# the recorded run of the chapter
# --------------------------------------------------------------------------------------------
#: The file the chapter reads (relative to the repository's root) and the command that writes it.
RECORD = "book/data/real_image_fields.json"
RECORD_COMMAND = f"nice -n 10 .venv/bin/python -m localization.experiments.real_image_fields {RECORD} --seed 0"


def _rounded(x: Any, digits: int = 4) -> Any:
    return None if x is None else np.round(np.asarray(x, np.float64), digits).tolist()


def _learned_entry(fields: LearnedFields) -> dict[str, Any]:
    shapes = fields.shapes
    return {
        "count": fields.count,
        "total": int(fields.fields.shape[0]),
        "counts": [int(c) for c in fields.counts],
        "settled": fields.settled,
        "lr": fields.lr,
        "steps": fields.steps,
        "fields": _rounded(fields.fields),
        "shapes": {
            "localized": [bool(b) for b in shapes.localized],
            **{name: _rounded(getattr(shapes, name)) for name in FieldShapes._fields if name != "localized"},
        },
    }


def fields_record(key: jax.Array, *, seed: int, **changes: Any) -> dict[str, Any]:
    """Run :func:`chapter_fields` and return its results as a JSON-ready record (fields rounded to 1e-4).

    Parameters
    ----------
    key : jax.Array
        PRNG key of :func:`chapter_fields`.
    seed : int
        The integer the key was made from (stored for provenance), >= 0.
    **changes
        Passed to :func:`chapter_fields`.

    Returns
    -------
    dict
        ``seed``, ``settings`` (the common :class:`FieldSettings` fields) and ``experiments``: one entry per
        (image, preprocessing, shape) with ``excess_kurtosis``, ``predicted``, ``neighbour_correlation``,
        ``oriented_threshold`` and, per learner (``neuron``, ``committee``, ``ica``), the count of
        localized final fields, the counts along the run, the fields and their shapes.
    """
    seed = v.integer("seed", seed, 0)
    experiments = chapter_fields(key, **changes)
    first = next(iter(experiments.values())).settings
    common = {f.name: getattr(first, f.name) for f in dataclasses.fields(first)}
    for name in ("image", "preprocessing", "shape"):
        common.pop(name)
    entries = []
    for (image, preprocessing, shape), e in experiments.items():
        entries.append(
            {
                "image": image,
                "preprocessing": preprocessing,
                "shape": list(shape),
                "excess_kurtosis": e.excess_kurtosis,
                "predicted": e.predicted,
                "neighbour_correlation": e.neighbour_correlation,
                "oriented_threshold": e.oriented_threshold,
                **{name: _learned_entry(getattr(e, name)) for name in ("neuron", "committee", "ica")},
            }
        )
    return {
        "description": "fields learned on the clone task of the two photographs (rows of 40 pixels, 8 x 8 "
        "patches; raw and whitened) by the single neuron, the committee machine and FastICA, with their shapes",
        "command": RECORD_COMMAND,
        "seed": seed,
        "settings": common,
        "experiments": entries,
    }


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m localization.experiments.real_image_fields OUT.json --seed 0``."""
    import argparse

    from localization import enable_float64, records

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the JSON record to write")
    parser.add_argument("--seed", type=int, default=0, help="the PRNG seed (default 0)")
    args = parser.parse_args(argv)
    if args.seed < 0:
        parser.error(f"--seed: seed must be an integer >= 0, got {args.seed}")
    enable_float64()
    records.write(args.out, fields_record(jax.random.key(args.seed), seed=args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
