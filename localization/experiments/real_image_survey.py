r"""The paper's prediction and the single neuron on every real-image data set of the book (one call).

For each photograph and preprocessing of :mod:`localization.data.images` this module draws the rows
once, applies the paper's sign rule to them with its bootstrap interval
(:func:`localization.experiments.own_data.predict`), and for each task of
:mod:`localization.experiments.real_images` (the same class-1 rows) computes the finite-N prediction
(:func:`~localization.experiments.real_images.reference_state`) and trains the single neuron by online
SGD (:func:`~localization.experiments.real_images.run_sgd`). The real-images chapter reads its tables
and figures from :func:`survey`.

Keys: data set i (photographs × preprocessings, in the order of ``IMAGE_NAMES`` and
``PREPROCESSINGS``) draws from ``fold_in(key, i)``; inside it the rows from ``build_task``'s keys
(class 1 from ``fold_in(., 1)``, shared by the tasks), the bootstrap from ``fold_in(., BOOTSTRAP)`` and
task j's SGD from ``fold_in(., SGD + j)``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax

from localization import validation as v
from localization.data import images
from localization.data.empirical import EmpiricalModel
from localization.experiments import own_data
from localization.experiments import real_images as ri
from localization.theory import prediction as rule

__all__ = ["BOOTSTRAP", "SGD", "SurveyRow", "Survey", "survey", "agreement"]

#: fold_in offset of a data set's bootstrap key.
BOOTSTRAP = 7
#: fold_in offset of a data set's SGD keys (task j: SGD + j).
SGD = 10


class SurveyRow(NamedTuple):
    """One (photograph, preprocessing, task): what the theory predicts and what SGD does.

    Attributes
    ----------
    settings : RealImageSettings
        The data set, task and run settings.
    prediction : own_data.Prediction
        The sign rule on the class-1 rows (shared by the data set's tasks), with its interval.
    neighbour_correlation : tuple of float
        Mean neighbouring-site correlation (class 0, class 1).
    reference : ReferenceState
        The finite-N prediction: the state the linear flow selects and Eq. (5)'s growth rates there.
    sgd : SGDRun
        The single neuron's online SGD from ``settings.inits`` starts.
    """

    settings: ri.RealImageSettings
    prediction: own_data.Prediction
    neighbour_correlation: tuple[float, float]
    reference: ri.ReferenceState
    sgd: ri.SGDRun

    @property
    def finite_n_localizes(self) -> bool:
        """Whether the finite-N prediction says the non-localized state is left within the run."""
        return self.reference.verdict == "unstable"


class Survey(NamedTuple):
    """What :func:`survey` finds.

    Attributes
    ----------
    predictions : dict
        (image, preprocessing) -> :class:`~localization.experiments.own_data.Prediction`, the sign rule
        on the data set's class-1 rows, for every data set.
    rows : tuple of SurveyRow
        The trained (image, preprocessing, task) combinations.
    """

    predictions: dict
    rows: tuple[SurveyRow, ...]

    def get(self, image: str, preprocessing: str, task: str) -> SurveyRow:
        """Return the row of one data set and task (``KeyError`` naming it when absent)."""
        for row in self.rows:
            s = row.settings
            if (s.image, s.preprocessing, s.task) == (image, preprocessing, task):
                return row
        raise KeyError(f"no row for image={image!r}, preprocessing={preprocessing!r}, task={task!r}")


def _names(name: str, values: Any, allowed: tuple[str, ...]) -> tuple[str, ...]:
    if isinstance(values, str) or not isinstance(values, (tuple, list)) or not values:
        raise TypeError(f"{name} must be a non-empty tuple of names from {allowed}, got {values!r}")
    bad = [x for x in values if x not in allowed]
    if bad:
        raise ValueError(f"{name} must hold names from {allowed}, got {bad}")
    return tuple(values)


def survey(
    key: jax.Array,
    *,
    image_names: tuple[str, ...] = images.IMAGE_NAMES,
    preprocessings: tuple[str, ...] = images.PREPROCESSINGS,
    tasks: tuple[str, ...] = ("lengthscale", "clone"),
    trained: tuple[str, ...] = ("raw",),
    settings: ri.RealImageSettings | None = None,
    resamples: int = 200,
) -> Survey:
    """Predict and train on every (photograph, preprocessing, task); the length-scale task skips whitened data.

    Parameters
    ----------
    key : jax.Array
        PRNG key (module docstring for how it is split).
    image_names, preprocessings, tasks : tuple of str
        Names from ``images.IMAGE_NAMES``, ``images.PREPROCESSINGS`` and ``real_images.TASKS``.
    trained : tuple of str
        The preprocessings (among ``preprocessings``) whose tasks are computed and trained; the
        others get their prediction only.
    settings : RealImageSettings or None
        Shape, geometry, samples and run settings shared by every row (its image, preprocessing and
        task are replaced); None for the defaults.
    resamples : int
        Bootstrap resamples of the prediction, >= 10.

    Returns
    -------
    Survey
        A prediction per (image, preprocessing); a row per trained (image, preprocessing, task), in
        that nesting order.
    """
    key = v.key("key", key)
    image_names = _names("image_names", image_names, images.IMAGE_NAMES)
    preprocessings = _names("preprocessings", preprocessings, images.PREPROCESSINGS)
    tasks = _names("tasks", tasks, ri.TASKS)
    trained = _names("trained", trained, preprocessings)
    base = ri.RealImageSettings() if settings is None else settings
    if not isinstance(base, ri.RealImageSettings):
        raise TypeError(f"settings must be a RealImageSettings or None, got {type(base).__name__}")
    resamples = v.integer("resamples", resamples, 10)
    rows, predictions = [], {}
    for i, (image, prep) in enumerate((a, b) for a in image_names for b in preprocessings):
        data_key = jax.random.fold_in(key, i)
        for j, task in enumerate(tasks):
            if task == "lengthscale" and prep == "whitened":
                continue
            s = base.replace(image=image, preprocessing=prep, task=task)
            if (image, prep) not in predictions:  # the class-1 rows are the same for every task
                source = EmpiricalModel.of(
                    ri.image_samples(jax.random.fold_in(data_key, 1), image, prep, s.shape, s.samples), s.shape
                )
                boot = jax.random.fold_in(data_key, BOOTSTRAP)
                predictions[image, prep] = own_data.predict(boot, source, resamples=resamples)
            if prep not in trained:
                break
            built = ri.build_task(data_key, s)
            sgd = ri.run_sgd(jax.random.fold_in(data_key, SGD + j), built)
            reference = ri.reference_state(built)
            rows.append(SurveyRow(s, predictions[image, prep], built.neighbour_correlation, reference, sgd))
    return Survey(predictions, tuple(rows))


def agreement(row: SurveyRow) -> dict[str, bool | None]:
    """Return whether each prediction agrees with the row's SGD run (None: it makes no prediction).

    SGD "localizes" when most (more than half) of its final fields are localized; the sign rule's
    ``"undecided"`` and a ``"marginal"`` or ``"no fixed point"`` finite-N verdict predict nothing.
    """
    if not isinstance(row, SurveyRow):
        raise TypeError(f"row must be a SurveyRow, got {type(row).__name__}")
    localizes = row.sgd.count > row.sgd.localized.size / 2
    sign = {rule.LOCALIZES: True, rule.DOES_NOT_LOCALIZE: False}.get(row.prediction.verdict)
    finite = {"unstable": True, "stable": False}.get(row.reference.verdict)
    return {
        "sign_rule": None if sign is None else sign == localizes,
        "finite_n": None if finite is None else finite == localizes,
    }
