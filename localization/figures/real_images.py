r"""The real-images chapter's figures (``book/real_images.md``).

Drawing only: the numbers come from :func:`localization.experiments.real_image_survey.survey` (run once
per process with the chapter's key and settings, :func:`chapter_survey`) and from the recorded run of
:mod:`localization.experiments.real_image_fields` (:func:`read_fields_record`).

* :func:`real_fields` — the two photographs beside the fields the single neuron learns on their rows
  (the clone task), the chapter's first figure;
* :func:`real_amplifier` — the amplifier of every data set against the Gaussian line, with its band;
* :func:`real_ica` — FastICA filters and network fields on 8 × 8 patches, from the record.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import numpy as np

from localization import book, plotting
from localization.data import images
from localization.experiments import real_image_fields, real_image_survey
from localization.experiments import real_images as ri
from localization.figures.hypercube import centre_peak
from localization.figures.many_neurons import draw_filter_gallery
from localization.figures.registry import Built, check_scale, new_figure, register

__all__ = ["CHAPTER_SETTINGS", "chapter_survey", "read_fields_record", "real_fields", "real_amplifier", "real_ica"]

#: The survey's run settings in the chapter: rows of 40 pixels on the ring, 4 starts, t = 150.
CHAPTER_SETTINGS = ri.RealImageSettings(inits=4, sgd_time=150.0)
#: Bootstrap resamples of the chapter's predictions.
CHAPTER_RESAMPLES = 100

_ROOT = Path(__file__).resolve().parents[2]
_LABELS = {"raw": "raw", "centred": "centred", "whitened": "whitened", "centre_surround": "centre–surround"}


@functools.lru_cache(maxsize=2)
def _survey(seed: int) -> real_image_survey.Survey:
    return real_image_survey.survey(
        book.key("real_images", "survey"), settings=CHAPTER_SETTINGS, resamples=CHAPTER_RESAMPLES
    )


def chapter_survey() -> real_image_survey.Survey:
    """Return the chapter's survey (computed once per process and book seed)."""
    return _survey(book.seed())


def read_fields_record(path: str | Path | None = None) -> dict[str, Any]:
    """Return the recorded run of :mod:`localization.experiments.real_image_fields` (default: the book's)."""
    path = _ROOT / real_image_fields.RECORD if path is None else Path(path)
    if not path.is_file():
        raise ValueError(f"path must name the record, written by `{real_image_fields.RECORD_COMMAND}`; got {path}")
    return json.loads(path.read_text(encoding="utf-8"))


@register("real_fields", "real_images")
def real_fields(scale: str = "chapter") -> Built:
    """Draw the two photographs beside the fields the single neuron learns on their rows (clone task, ring).

    Rows of 40 grey pixels, z-scored, cyclically shifted at random, against their Gaussian clone; online
    SGD from 4 small starts to t = 150 (:data:`CHAPTER_SETTINGS`), book key ``("real_images", "survey")``.

    Parameters
    ----------
    scale : {"chapter"}
        The chapter's scale only (the survey is the chapter's).

    Returns
    -------
    Built
        The figure and the survey (:class:`localization.experiments.real_image_survey.Survey`).
    """
    check_scale(scale)
    result = chapter_survey()
    fig = new_figure((plotting.COLUMN_WIDTH, 4.6), layout="constrained")
    axes = fig.subplots(2, 2, width_ratios=[1.25, 1])
    for row, name in enumerate(images.IMAGE_NAMES):
        photo = images.grey_image(name)
        ax = axes[row, 0]
        ax.imshow(photo, cmap="gray")
        h, w = photo.shape
        length = CHAPTER_SETTINGS.shape[0]
        ax.plot([w * 0.08, w * 0.08 + length], [h * 0.9] * 2, color="tab:orange", lw=3)
        ax.set_title(f"{name}  (orange: 40 pixels)", fontsize="medium")
        ax.set_axis_off()
        run = result.get(name, "raw", "clone").sgd
        fields = np.array([centre_peak(w) for w in run.weights[:, -1]])
        sites = np.arange(fields.shape[1]) - fields.shape[1] // 2
        ax = axes[row, 1]
        for f, localized in zip(fields, run.localized, strict=True):
            ax.plot(sites, f / np.abs(f).max(), color="tab:blue" if localized else "0.5", lw=1.2)
        ax.axhline(0, color="k", lw=0.5)
        ax.set_title(f"{int(run.localized.sum())} of {run.localized.size} fields localized", fontsize="medium")
        ax.set_ylabel(r"$w\,/\max|w|$")
        ax.set_xlabel("site − peak")
    return Built(fig, result)


@register("real_amplifier", "real_images")
def real_amplifier(scale: str = "chapter") -> Built:
    """Draw φ(a)/(√(2/π) a) − 1 of every data set with its bootstrap band: above 0, φ is super-linear.

    The amplifier of paper Eq. (6) estimated from the rows of each photograph and preprocessing (the
    chapter's survey, :func:`chapter_survey`), relative to the Gaussian line; one panel per photograph.

    Parameters
    ----------
    scale : {"chapter"}
        The chapter's scale only.

    Returns
    -------
    Built
        The figure and the survey's predictions.
    """
    check_scale(scale)
    predictions = chapter_survey().predictions
    fig = new_figure((plotting.COLUMN_WIDTH, 3.2), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    for ax, name in zip(axes, images.IMAGE_NAMES, strict=True):
        for prep in images.PREPROCESSINGS:
            p = predictions[name, prep]
            line = p.amplifier - p.deviation
            (drawn,) = ax.plot(p.a, p.deviation / line, label=_LABELS[prep])
            ax.fill_between(p.a, *(p.deviation_band / line), color=drawn.get_color(), alpha=0.3, lw=0)
        ax.axhline(0, color="k", lw=0.6)
        ax.set_yscale("symlog", linthresh=0.03)
        ticks = [-1.0, -0.3, -0.1, -0.03, 0.0, 0.03, 0.1, 0.3]
        ax.set_yticks(ticks, [f"{t:g}".replace("-", "−") for t in ticks])
        ax.set_ylim(-1.0, 0.4)  # phi > 0: the ratio minus 1 exceeds -1
        ax.set_title(name, fontsize="medium")
        ax.set_xlabel("$a$")
    axes[0].set_ylabel(r"$\varphi(a)\,/\,\sqrt{2/\pi}\,a-1$")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=4, fontsize="small")
    return Built(fig, predictions)


@register("real_ica", "real_images")
def real_ica(scale: str = "chapter") -> Built:
    """Draw FastICA filters of 8 × 8 patches from the recorded run: whitened flower.jpg, raw china.jpg.

    The first 10 filters of each fit (:mod:`localization.experiments.real_image_fields`, record
    ``book/data/real_image_fields.json``), each over its largest absolute entry.

    Parameters
    ----------
    scale : {"chapter"}
        The chapter's scale only.

    Returns
    -------
    Built
        The figure and the record.
    """
    check_scale(scale)
    record = read_fields_record()
    fig = new_figure((plotting.COLUMN_WIDTH, 5.4), layout="constrained")
    top, bottom = fig.subfigures(2, 1)
    for sub, (name, prep) in zip((top, bottom), [("flower.jpg", "whitened"), ("china.jpg", "raw")], strict=True):
        entry = next(
            e for e in record["experiments"] if (e["image"], e["preprocessing"], len(e["shape"])) == (name, prep, 2)
        )
        filters = np.asarray(entry["ica"]["fields"])
        title = f"FastICA, {prep} {name}, 8 × 8: 10 of {filters.shape[0]} filters"
        draw_filter_gallery(sub, filters, tuple(entry["shape"]), title)
    return Built(fig, record)
