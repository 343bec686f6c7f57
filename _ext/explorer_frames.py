"""Explorer frames out of the page: each explorer's pictures in a script file loaded on first use.

An explorer (``localization.book.explorer_page.static_html``) carries every frame of its picture as a PNG
data URI in the page's JSON. Seven pages with explorers weighed 1.6-1.9 MB. After the build, this moves
each explorer's frames to ``_static/explorers/<page>--<id>.js`` (a ``<script>`` that fills
``window.locExplorerFrames``: a script, unlike ``fetch``, loads from ``file://`` too, so the site still
works offline) and writes the file's address into the explorer's ``data-frames``; the explorer loads
it when the reader first moves a control. The page keeps the default frame as its picture.

Idempotent: a page whose explorers no longer carry frames (an incremental build) is left as it is.
"""

import html
import json
import os
import re
from pathlib import Path

# The explorer's opening tag and, further on in the same explorer, its JSON (static_html's layout).
_EXPLORER = re.compile(
    r'<div class="loc-explorer" id="(?P<id>[^"]+)">(?P<body>.*?)'
    r'<script type="application/json">(?P<json>.*?)</script>',
    re.DOTALL,
)


def externalise(page: Path, outdir: Path) -> int:
    """Move the frames of every explorer of one built page to their own script file.

    Parameters
    ----------
    page : Path
        A built HTML page.
    outdir : Path
        The site's root (``_build/html``).

    Returns
    -------
    int
        How many explorers' frames were moved.
    """
    text = page.read_text(encoding="utf-8")
    if 'class="loc-explorer"' not in text:
        return 0
    target = outdir / "_static" / "explorers"
    stem = page.relative_to(outdir).with_suffix("").as_posix().replace("/", "--")
    moved = 0

    def replace(match: re.Match) -> str:
        nonlocal moved
        spec = json.loads(match.group("json"))
        if "frames" not in spec:
            return match.group(0)
        ident = match.group("id")
        script = target / f"{stem}--{ident}.js"
        target.mkdir(parents=True, exist_ok=True)
        frames = json.dumps(spec.pop("frames"), separators=(",", ":")).replace("</", "<\\/")
        script.write_text(
            f"(window.locExplorerFrames = window.locExplorerFrames || {{}})[{json.dumps(ident)}] = {frames};\n",
            encoding="utf-8",
        )
        address = html.escape(os.path.relpath(script, page.parent).replace(os.sep, "/"))
        payload = json.dumps(spec, separators=(",", ":")).replace("</", "<\\/")
        moved += 1
        return (
            f'<div class="loc-explorer" id="{ident}" data-frames="{address}">{match.group("body")}'
            f'<script type="application/json">{payload}</script>'
        )

    text = _EXPLORER.sub(replace, text)
    if moved:
        page.write_text(text, encoding="utf-8")
    return moved


def _externalise_all(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    for page in outdir.rglob("*.html"):
        externalise(page, outdir)


def setup(app):
    """Register the extension with Sphinx: move explorer frames out of every page after the build."""
    app.connect("build-finished", _externalise_all)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
