"""Grey pixel rows and patches of the two photographs bundled with scikit-learn (nothing is downloaded).

scikit-learn's wheel ships two JPEG photographs, ``china.jpg`` and ``flower.jpg`` (427 x 640, RGB;
``sklearn.datasets.load_sample_image``). This module turns them into grey images
(:func:`grey_image`) and cuts random horizontal rows (:func:`image_rows`) or rectangular patches
(:func:`image_patches`) from them, optionally preprocessed (:data:`PREPROCESSINGS`), to be used as
real data, e.g. ``EmpiricalModel.of(image_rows(key, "china.jpg", 40, 20_000))``.

Preprocessings:

``"raw"``
    the luminance values, in [0, 1];
``"centred"``
    each row (patch) minus its own mean, which removes the local brightness;
``"whitened"``
    the centred rows (patches) ZCA-whitened with the covariance C of the drawn set: x -> (x - m) W,
    m the set's mean and W = V diag(1/sqrt(max(λ, λ_floor))) Vᵀ from C = V diag(λ) Vᵀ, with the
    eigenvalues below λ_floor = :data:`WHITENING_FLOOR` x λ_max floored (the constant direction has
    λ = 0 after centring, and JPEG leaves little power at the highest frequencies); the whitened set
    has covariance V diag(min(1, λ/λ_floor)) Vᵀ: the identity on the unfloored directions;
``"centre_surround"``
    the whole image filtered by a difference of Gaussians, G_1 * I - G_2 * I (standard deviations 1
    and 2 pixels, ``scipy.ndimage.gaussian_filter`` with mode ``"reflect"``), before the rows
    (patches) are cut: a retina-like band-pass.

Positions are drawn uniformly (top-left corner, so that the row or patch lies inside the image) with
``jax.random`` from ``key``; the results are NumPy float64 arrays.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import numpy as np

from localization import validation as v

__all__ = [
    "IMAGE_SOURCES",
    "IMAGE_NAMES",
    "PREPROCESSINGS",
    "LUMINANCE_WEIGHTS",
    "WHITENING_FLOOR",
    "DOG_SIGMAS",
    "grey_image",
    "image_rows",
    "image_patches",
    "check_data_set",
]

#: Where the photographs come from, as their README (``sklearn/datasets/images/README.txt``) records
#: it. That README names "danielbuechele" as the author of *both* photographs, but the flower's
#: photostream URL belongs to the Flickr user "vultilion"; both are recorded.
IMAGE_SOURCES: dict[str, dict[str, str]] = {
    "china.jpg": {
        "url": "https://www.flickr.com/photos/danielbuechele/6061409035/sizes/z/in/photostream/",
        "author": "danielbuechele (https://www.flickr.com/photos/danielbuechele/)",
        "licence": "Creative Commons Attribution 2.0 (https://creativecommons.org/licenses/by/2.0/)",
        "retrieved": "21 August 2011 by Robert Layton, for scikit-learn",
        "note": "",
    },
    "flower.jpg": {
        "url": "https://www.flickr.com/photos/vultilion/6056698931/sizes/z/in/photostream/",
        "author": "danielbuechele according to the README's attribution line (https://www.flickr.com/photos/vultilion/)",
        "licence": "Creative Commons Attribution 2.0 (https://creativecommons.org/licenses/by/2.0/)",
        "retrieved": "21 August 2011 by Robert Layton, for scikit-learn",
        "note": (
            "the README attributes this photograph to danielbuechele, but its URL and the author link "
            "it gives are those of the Flickr user vultilion: the attribution line looks copied from "
            "china.jpg's entry, and vultilion is likely the photographer"
        ),
    },
}

#: The photographs' names, the keys of :data:`IMAGE_SOURCES`.
IMAGE_NAMES = tuple(IMAGE_SOURCES)

#: The preprocessings of :func:`image_rows` and :func:`image_patches` (see the module docstring).
PREPROCESSINGS = ("raw", "centred", "whitened", "centre_surround")

#: ITU-R BT.601 luma weights of (R, G, B).
LUMINANCE_WEIGHTS = (0.299, 0.587, 0.114)

#: Whitening floors the covariance's eigenvalues at this fraction of the largest one.
WHITENING_FLOOR = 1e-3

#: Standard deviations (pixels) of the centre and surround Gaussians of ``"centre_surround"``.
DOG_SIGMAS = (1.0, 2.0)


def _image_name(name: Any) -> str:
    if not isinstance(name, str):
        raise TypeError(f"name must be one of {IMAGE_NAMES}, got {name!r}")
    if name not in IMAGE_SOURCES:
        raise ValueError(f"name must be one of {IMAGE_NAMES}, got {name!r}")
    return name


def _preprocessing(value: Any) -> str:
    if not isinstance(value, str) or value not in PREPROCESSINGS:
        raise ValueError(f"preprocessing must be one of {PREPROCESSINGS}, got {value!r}")
    return value


def check_data_set(image: Any, preprocessing: Any, shape: Any) -> tuple[int, ...]:
    """Check one data set, a (photograph, preprocessing, shape), and return its shape as a tuple.

    Parameters
    ----------
    image : str
        One of :data:`IMAGE_NAMES`.
    preprocessing : str
        One of :data:`PREPROCESSINGS`.
    shape : int, tuple or list of int
        ``N`` or ``(N,)`` for rows of N pixels, ``(h, w)`` for patches; every axis >= 4.

    Returns
    -------
    tuple of int
        ``(N,)`` or ``(h, w)``.

    Raises
    ------
    ValueError
        Naming the argument, its value and the valid choices.
    """
    if not isinstance(image, str) or image not in IMAGE_SOURCES:
        raise ValueError(f"image must be one of {IMAGE_NAMES}, got {image!r}")
    _preprocessing(preprocessing)
    grid = v.shape("shape", tuple(shape) if isinstance(shape, list) else shape, minimum=4)
    if len(grid) > 2:
        raise ValueError(f"shape must be (N,) or (h, w), got {shape!r}")
    return grid


@functools.cache
def _grey(name: str) -> np.ndarray:
    from sklearn.datasets import load_sample_image

    rgb = load_sample_image(name).astype(np.float64) / 255.0
    grey = rgb @ np.asarray(LUMINANCE_WEIGHTS)
    grey.setflags(write=False)
    return grey


def grey_image(name: str) -> np.ndarray:
    """Return the luminance of a bundled photograph (ITU-R BT.601: 0.299 R + 0.587 G + 0.114 B).

    Parameters
    ----------
    name : str
        One of :data:`IMAGE_NAMES` (``"china.jpg"``, ``"flower.jpg"``).

    Returns
    -------
    np.ndarray
        (H, W) = (427, 640) read-only float64 in [0, 1] (8-bit values / 255); cached.
    """
    return _grey(_image_name(name))


@functools.cache
def _filtered(name: str, preprocessing: str) -> np.ndarray:
    """Return the image the rows or patches are cut from: the grey image, or its difference of Gaussians."""
    grey = _grey(name)
    if preprocessing != "centre_surround":
        return grey
    from scipy.ndimage import gaussian_filter

    centre, surround = (gaussian_filter(grey, sigma, mode="reflect") for sigma in DOG_SIGMAS)
    out = centre - surround
    out.setflags(write=False)
    return out


def _whiten(x: np.ndarray) -> np.ndarray:
    """ZCA-whiten the rows of (num, D) ``x`` with their own covariance (eigenvalues floored; module docstring)."""
    centred = x - x.mean(axis=0)
    cov = centred.T @ centred / x.shape[0]
    lam, vec = np.linalg.eigh(0.5 * (cov + cov.T))
    if not lam[-1] > 0:
        raise ValueError("preprocessing='whitened' needs rows/patches that vary, but the drawn set is constant")
    scale = 1.0 / np.sqrt(np.maximum(lam, WHITENING_FLOOR * lam[-1]))
    return centred @ ((vec * scale) @ vec.T)


def _preprocess(x: np.ndarray, preprocessing: str) -> np.ndarray:
    """Apply the per-row (per-patch) part of ``preprocessing`` to (num, D) ``x``."""
    if preprocessing in ("centred", "whitened"):
        x = x - x.mean(axis=1, keepdims=True)
    if preprocessing == "whitened":
        if x.shape[0] < 2:
            raise ValueError(f"num must be >= 2 for preprocessing='whitened' (a covariance), got {x.shape[0]}")
        x = _whiten(x)
    return x


def _corners(key: jax.Array, num: int, height: int, width: int, image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Uniform top-left corners of ``num`` (height, width) windows inside ``image``."""
    k_top, k_left = jax.random.split(key)
    rows, cols = image.shape
    top = np.asarray(jax.random.randint(k_top, (num,), 0, rows - height + 1))
    left = np.asarray(jax.random.randint(k_left, (num,), 0, cols - width + 1))
    return top, left


def image_rows(key: jax.Array, name: str, length: int, num: int, *, preprocessing: str = "raw") -> np.ndarray:
    """Return ``num`` random horizontal rows of ``length`` pixels of a photograph.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key (positions: image row and first column, uniform).
    name : str
        One of :data:`IMAGE_NAMES`.
    length : int
        Pixels per row, 2 <= length <= the image width (640).
    num : int
        Number of rows, >= 1 (>= 2 for ``"whitened"``).
    preprocessing : str
        One of :data:`PREPROCESSINGS` (module docstring).

    Returns
    -------
    np.ndarray
        (num, length) float64.
    """
    key = v.key("key", key)
    name = _image_name(name)
    image = _filtered(name, _preprocessing(preprocessing))
    length = v.integer("length", length, 2, image.shape[1])
    num = v.integer("num", num, 1)
    top, left = _corners(key, num, 1, length, image)
    x = image[top[:, None], left[:, None] + np.arange(length)[None, :]]
    return _preprocess(x, preprocessing)


def image_patches(
    key: jax.Array, name: str, shape: tuple[int, int], num: int, *, preprocessing: str = "raw"
) -> np.ndarray:
    """Return ``num`` random (h, w) patches of a photograph.

    Parameters
    ----------
    key : jax.Array
        A JAX PRNG key (positions: top-left corners, uniform).
    name : str
        One of :data:`IMAGE_NAMES`.
    shape : tuple[int, int]
        (h, w), 2 <= h <= the image height (427), 2 <= w <= the image width (640).
    num : int
        Number of patches, >= 1 (>= 2 for ``"whitened"``).
    preprocessing : str
        One of :data:`PREPROCESSINGS` (module docstring); centring and whitening act on whole patches.

    Returns
    -------
    np.ndarray
        (num, h, w) float64.
    """
    key = v.key("key", key)
    name = _image_name(name)
    image = _filtered(name, _preprocessing(preprocessing))
    if not isinstance(shape, tuple) or len(shape) != 2:
        raise TypeError(f"shape must be a tuple (h, w) of two integers, got {shape!r}")
    h = v.integer("shape[0]", shape[0], 2, image.shape[0])
    w = v.integer("shape[1]", shape[1], 2, image.shape[1])
    num = v.integer("num", num, 1)
    top, left = _corners(key, num, h, w, image)
    x = image[top[:, None, None] + np.arange(h)[None, :, None], left[:, None, None] + np.arange(w)[None, None, :]]
    return _preprocess(x.reshape(num, h * w), preprocessing).reshape(num, h, w)
