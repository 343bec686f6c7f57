"""Lighter figures: every PNG the site serves becomes a 256-colour palette PNG after the build.

The book draws its figures at twice their CSS size (crisp on high-density screens), as RGBA PNGs;
the simulation and effective-dynamics pages carried 1.5 MB of them. Line plots and colour maps need
far fewer than 2^24 colours: a palette of 256 (Pillow's median-cut quantizer) leaves them visually
unchanged (mean channel error under 1 in 255 on a test figure with a colour map) at about a quarter
of the bytes, so that every page stays under the browser check's 1.5 MB. An image with transparent
pixels, one that would not get smaller, or one already a palette image (a second build) is left as
it is.
"""

import io
from pathlib import Path


def lighten(path: Path) -> int:
    """Rewrite one PNG as a 256-colour palette PNG if that is smaller.

    Parameters
    ----------
    path : Path
        A PNG file.

    Returns
    -------
    int
        Bytes saved (0 if the file was left as it is).
    """
    from PIL import Image

    with Image.open(path) as image:
        if image.mode == "P":
            return 0
        rgba = image.convert("RGBA")
    if rgba.getextrema()[3][0] < 255:
        return 0  # transparent pixels: a palette would have to keep the alpha channel; left as it is
    palette = rgba.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    buffer = io.BytesIO()
    palette.save(buffer, "PNG", optimize=True)
    before = path.stat().st_size
    if buffer.tell() >= before:
        return 0
    path.write_bytes(buffer.getvalue())
    return before - buffer.tell()


def _lighten_all(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for path in Path(app.outdir, "_images").glob("*.png"):
        lighten(path)


def setup(app):
    """Register the extension with Sphinx: lighten the site's PNGs after the build."""
    app.connect("build-finished", _lighten_all)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
