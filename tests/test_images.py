"""localization.data.images: grey rows and patches of scikit-learn's two bundled photographs."""

import math
from pathlib import Path

import jax
import numpy as np
import pytest
import sklearn
from PIL import Image
from scipy.ndimage import gaussian_filter
from scipy.stats import kurtosis
from sklearn.datasets import load_sample_image

from localization.data import images
from localization.data.empirical import EmpiricalModel
from localization.data.images import IMAGE_NAMES, IMAGE_SOURCES, grey_image, image_patches, image_rows

KEY = jax.random.key(0)
H, W = 427, 640


def full_row_index(row, image):
    """The index of the image row equal to ``row`` (a full-width row), found by search."""
    hits = np.flatnonzero(np.all(image == row[None, :], axis=1))
    assert hits.size >= 1
    return hits[0]


def test_sources_record_the_readme_of_the_installed_scikit_learn():
    readme = (Path(sklearn.__file__).parent / "datasets" / "images" / "README.txt").read_text()
    assert IMAGE_NAMES == ("china.jpg", "flower.jpg")
    for name, source in IMAGE_SOURCES.items():
        assert f"Image: {name}" in readme and source["url"] in readme
        assert "creativecommons.org/licenses/by/2.0" in source["licence"]
    # the README's attribution line names danielbuechele for the flower, whose URL is vultilion's
    assert "vultilion" in IMAGE_SOURCES["flower.jpg"]["url"]
    flower = IMAGE_SOURCES["flower.jpg"]
    assert "danielbuechele" in flower["author"] and "vultilion" in flower["note"]


@pytest.mark.parametrize("name", IMAGE_NAMES)
def test_grey_image_is_the_bt601_luminance(name):
    grey = grey_image(name)
    assert grey.shape == (H, W) and grey.dtype == np.float64 and not grey.flags.writeable
    assert grey is grey_image(name)  # cached
    assert 0.0 <= grey.min() and grey.max() <= 1.0
    # PIL's "L" conversion is the same BT.601 weighting rounded to integers: within half a grey level
    pil = np.asarray(Image.fromarray(load_sample_image(name)).convert("L"), dtype=np.float64)
    assert np.max(np.abs(255 * grey - pil)) <= 0.5 + 1e-9
    # a colour image with different channels: the weights matter (green dominates)
    rgb = load_sample_image(name).astype(np.float64) / 255
    assert np.max(np.abs(grey - rgb.mean(axis=2))) > 0.01


def test_rows_are_image_segments_and_reproducible():
    x = image_rows(KEY, "china.jpg", 40, 50)
    assert x.shape == (50, 40) and x.dtype == np.float64
    np.testing.assert_array_equal(x, image_rows(KEY, "china.jpg", 40, 50))
    assert not np.array_equal(x, image_rows(jax.random.key(1), "china.jpg", 40, 50))
    windows = np.lib.stride_tricks.sliding_window_view(grey_image("china.jpg"), 40, axis=1)  # (H, W-39, 40)
    for row in x[:5]:
        assert np.any(np.all(windows == row, axis=-1))
    # the rows' positions are uniform: 2000 full-width rows fall in each quarter of the image height
    # as Binomial(2000, 1/4), 500 +- 19.4 (6 sd = 116)
    grey = grey_image("flower.jpg")
    index = {row.tobytes(): i for i, row in enumerate(grey)}
    assert len(index) == H  # no two rows of the photograph are equal
    tops = np.array([index[row.tobytes()] for row in image_rows(KEY, "flower.jpg", W, 2000)])
    counts = np.bincount(4 * tops // H, minlength=4)
    assert np.all(np.abs(counts - 500) < 6 * math.sqrt(2000 * 0.25 * 0.75)), counts


def test_centred_rows_are_the_raw_rows_minus_their_mean():
    raw = image_rows(KEY, "flower.jpg", 32, 300)
    centred = image_rows(KEY, "flower.jpg", 32, 300, preprocessing="centred")
    np.testing.assert_allclose(centred.mean(axis=1), 0.0, atol=1e-14)
    np.testing.assert_allclose(centred, raw - raw.mean(axis=1, keepdims=True), atol=1e-15)


def test_whitened_rows_have_identity_covariance_except_in_floored_directions():
    """china.jpg, 40-pixel rows: after centring, the only eigenvalue of the covariance below
    1e-3 of the largest is the constant direction's (0; the next is 1.2e-2 of the largest, measured), so
    the whitened covariance is exactly I - 11ᵀ/N (to rounding, 1e-9 stated)."""
    n, num = 40, 5000
    centred = image_rows(KEY, "china.jpg", n, num, preprocessing="centred")
    white = image_rows(KEY, "china.jpg", n, num, preprocessing="whitened")
    assert white.shape == (num, n)
    np.testing.assert_allclose(white.mean(axis=0), 0.0, atol=1e-10)
    cov = white.T @ white / num
    np.testing.assert_allclose(cov, np.eye(n) - np.ones((n, n)) / n, atol=1e-9)

    # whitening removes the strong correlation of neighbouring pixels
    def neighbour(x):
        return np.mean([np.corrcoef(x[:, j], x[:, j + 1])[0, 1] for j in range(n - 1)])

    assert neighbour(centred) > 0.4 and abs(neighbour(white)) < 0.1
    # flower.jpg has a few eigenvalues below the floor: their directions come out with variance < 1
    fw = image_rows(KEY, "flower.jpg", n, num, preprocessing="whitened")
    eig = np.linalg.eigvalsh(fw.T @ fw / num)
    assert eig.max() < 1 + 1e-9 and np.sum(np.abs(eig - 1) < 1e-9) >= n - 8 and eig[0] < 1e-9


def test_centre_surround_rows_are_rows_of_the_difference_of_gaussians_image():
    grey = grey_image("flower.jpg")
    dog = gaussian_filter(grey, 1.0, mode="reflect") - gaussian_filter(grey, 2.0, mode="reflect")
    raw = image_rows(KEY, "flower.jpg", W, 6)  # full rows: only the row index is random
    cs = image_rows(KEY, "flower.jpg", W, 6, preprocessing="centre_surround")
    for r, c in zip(raw, cs, strict=True):
        np.testing.assert_allclose(c, dog[full_row_index(r, grey)], rtol=0, atol=1e-14)
    assert np.abs(cs).max() < 0.5 * np.abs(raw).max()  # a band-pass: the brightness is gone


def test_patches_shapes_positions_and_preprocessings():
    grey = grey_image("china.jpg")
    p = image_patches(KEY, "china.jpg", (4, W), 5)  # full-width patches: only the top row is random
    assert p.shape == (5, 4, W) and p.dtype == np.float64
    for patch in p:
        top = full_row_index(patch[0], grey)
        np.testing.assert_array_equal(patch, grey[top : top + 4])
    sq = image_patches(KEY, "china.jpg", (6, 5), 3000, preprocessing="centred")
    assert sq.shape == (3000, 6, 5)
    np.testing.assert_allclose(sq.mean(axis=(1, 2)), 0.0, atol=1e-14)
    white = image_patches(KEY, "china.jpg", (6, 5), 3000, preprocessing="whitened").reshape(3000, 30)
    eig = np.linalg.eigvalsh(white.T @ white / 3000)
    assert eig.max() < 1 + 1e-9 and np.sum(np.abs(eig - 1) < 1e-9) >= 25
    m = EmpiricalModel.of(image_patches(KEY, "china.jpg", (6, 5), 3000), name="china patches")
    assert m.grid == (6, 5) and m.sample(KEY, 4, (6, 5)).shape == (4, 30)


def test_photograph_rows_span_both_signs_of_the_excess_kurtosis():
    """Median excess kurtosis per coordinate of 5000 rows of 40 pixels. Measured with 20 000 rows
    (keys 0-3): china raw -1.47 (spread 0.01 between keys), centred +3.5; flower raw +0.12, centred
    +7.8. Thresholds halfway to 0 are many sampling errors away."""
    med = {}
    for name in IMAGE_NAMES:
        for pre in ("raw", "centred"):
            x = image_rows(KEY, name, 40, 5000, preprocessing=pre)
            med[name, pre] = float(np.median(kurtosis(x, axis=0)))
    assert med["china.jpg", "raw"] < -0.7  # sub-Gaussian: localizing per the paper
    assert med["china.jpg", "centred"] > 1.7
    assert abs(med["flower.jpg", "raw"]) < 0.5
    assert med["flower.jpg", "centred"] > 3.9


def test_arguments_are_checked_by_name():
    with pytest.raises(ValueError, match="name must be one of"):
        grey_image("lena.png")
    with pytest.raises(TypeError, match="name"):
        grey_image(3)
    with pytest.raises(TypeError, match="key"):
        image_rows(0, "china.jpg", 40, 5)
    with pytest.raises(ValueError, match="length"):
        image_rows(KEY, "china.jpg", 1, 5)
    with pytest.raises(ValueError, match=r"length must be an integer in \[2, 640\], got 641"):
        image_rows(KEY, "china.jpg", W + 1, 5)
    with pytest.raises(TypeError, match="length"):
        image_rows(KEY, "china.jpg", 4.0, 5)
    with pytest.raises(ValueError, match="num"):
        image_rows(KEY, "china.jpg", 40, 0)
    with pytest.raises(ValueError, match="preprocessing must be one of"):
        image_rows(KEY, "china.jpg", 40, 5, preprocessing="zca")
    with pytest.raises(ValueError, match="num must be >= 2 for preprocessing='whitened'"):
        image_rows(KEY, "china.jpg", 40, 1, preprocessing="whitened")
    with pytest.raises(ValueError, match=r"shape\[0\] must be an integer in \[2, 427\]"):
        image_patches(KEY, "china.jpg", (H + 1, 4), 5)
    with pytest.raises(ValueError, match=r"shape\[1\]"):
        image_patches(KEY, "china.jpg", (4, 1), 5)
    with pytest.raises(TypeError, match="shape must be a tuple"):
        image_patches(KEY, "china.jpg", [4, 4], 5)
    assert math.isfinite(images.WHITENING_FLOOR) and images.DOG_SIGMAS == (1.0, 2.0)


@pytest.mark.parametrize(
    "image, preprocessing, shape, match",
    [
        ("moon.jpg", "raw", (40,), "image must be one of"),
        ("china.jpg", "sharpened", (40,), "preprocessing must be one of"),
        ("china.jpg", "raw", (4, 4, 4), "shape must be"),
        ("china.jpg", "raw", (3,), "shape"),
    ],
)
def test_check_data_set_names_the_bad_argument(image, preprocessing, shape, match):
    with pytest.raises(ValueError, match=match):
        images.check_data_set(image, preprocessing, shape)


def test_check_data_set_returns_the_shape_as_a_tuple():
    assert images.check_data_set("flower.jpg", "whitened", [8, 8]) == (8, 8)
    assert images.check_data_set("china.jpg", "raw", 40) == (40,)
