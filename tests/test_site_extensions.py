"""The site's own Sphinx extensions (``_ext``) that change built pages: tested on synthetic files."""

import importlib.util
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

EXT = Path(__file__).resolve().parents[1] / "_ext"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, EXT / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_figure_png_becomes_a_lighter_palette_png_that_looks_the_same(tmp_path):
    from PIL import Image

    page_weight = _load("page_weight")
    fig, ax = plt.subplots(figsize=(5, 3), dpi=200)
    x = np.linspace(0, 10, 400)
    for k in range(6):
        ax.plot(x, np.sin(x + k), lw=1.5)
    ax.imshow(np.outer(np.linspace(-1, 1, 50), np.linspace(-1, 1, 50)), extent=(0, 3, -1, 1), cmap="RdBu_r")
    path = tmp_path / "figure.png"
    fig.savefig(path)
    plt.close(fig)

    def pixels(p):
        with Image.open(p) as image:
            return image.mode, np.asarray(image.convert("RGBA"), dtype=float)

    _, before = pixels(path)
    size = path.stat().st_size
    saved = page_weight.lighten(path)
    mode, after = pixels(path)
    assert mode == "P" and saved == size - path.stat().st_size and saved > size / 3
    assert after.shape == before.shape  # the same pixels (width and height)
    assert np.mean(np.abs(after - before)) < 2.0 and np.percentile(np.abs(after - before), 99) < 24
    assert page_weight.lighten(path) == 0  # a second build leaves it as it is
