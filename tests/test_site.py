"""Checks of the built site (``_build/html``) in headless Chromium, with the network cut off.

Run after ``jupyter-book build``. A missing browser or a missing build is a failure, never a skip:
``make test`` installs Chromium when it is absent.
"""

import re
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"


def _toc_pages():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    pages = [toc["root"]]
    for part in toc.get("parts", []):
        pages += [c["file"] for c in part.get("chapters", [])]
    return pages


PAGES = _toc_pages()


def _chromium():
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    assert exe, "chromium is not installed: `make test` installs it (apt-get install chromium)"
    return exe


def render(page: str) -> str:
    """The DOM of a built page after scripts ran, with every network request refused."""
    html = SITE / f"{page}.html"
    assert html.exists(), f"{html} missing: build the book first"
    with tempfile.TemporaryDirectory() as profile:
        cmd = [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            f"--user-data-dir={profile}",
            # No network at all: names do not resolve and the proxy is a closed local port.
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--proxy-server=127.0.0.1:9",
            "--allow-file-access-from-files",
            "--virtual-time-budget=20000",
            "--dump-dom",
            html.as_uri(),
        ]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


class _Resources(HTMLParser):
    """Collects every URL a page would fetch by itself (scripts, styles, images, frames)."""

    def __init__(self):
        super().__init__()
        self.urls = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("script", "img", "iframe", "source", "video", "audio") and attrs.get("src"):
            self.urls.append(attrs["src"])
        if (
            tag == "link"
            and attrs.get("href")
            and attrs.get("rel") in ("stylesheet", "preload", "icon", "modulepreload")
        ):
            self.urls.append(attrs["href"])


@pytest.mark.parametrize("page", PAGES)
def test_page_requests_nothing_from_the_internet(page):
    parser = _Resources()
    parser.feed((SITE / f"{page}.html").read_text(encoding="utf-8"))
    remote = [u for u in parser.urls if re.match(r"^(https?:)?//", u)]
    assert not remote, f"{page} loads remote resources: {remote}"


@pytest.mark.parametrize("page", PAGES)
def test_page_renders_offline(page):
    dom = render(page)
    assert "<main" in dom or 'id="main-content"' in dom
    assert "Traceback (most recent call last)" not in dom, f"{page} shows a Python traceback"
    source = (SITE / f"{page}.html").read_text(encoding="utf-8")
    if "\\(" in source or "\\[" in source or 'class="math' in source:
        assert dom.count("<mjx-container") > 0, f"{page}: math did not render offline"
        assert "\\(" not in re.sub(r"<(script|pre|code)[\s\S]*?</\1>", "", dom), f"{page}: raw TeX left"


@pytest.mark.parametrize("page", PAGES)
def test_every_figure_shows_an_image(page):
    """A glued figure that lost its picture renders as the text '<Figure size ...>'."""
    source = (SITE / f"{page}.html").read_text(encoding="utf-8")
    figures = re.findall(r"<figure[\s\S]*?</figure>", source)
    missing = [f[:120] for f in figures if "<img" not in f]
    assert not missing, f"{page}: figures without an image: {missing}"
    assert "&lt;Figure size" not in source, f"{page}: a figure was rendered as text"


def test_landing_page_uses_every_convention():
    dom = render("book/intro")
    assert dom.count("<mjx-container") >= 3, "math did not render"
    source = (SITE / "book" / "intro.html").read_text(encoding="utf-8")
    assert re.search(r'<span class="eqno">\(1\)<a class="headerlink" href="#equation-eq-intro-m2"', source), (
        "the first displayed equation is not numbered (1)"
    )
    assert 'class="reference internal"' in dom, "no cross-references"
    assert re.search(r"<img[^>]+src=\"[^\"]+\.png", dom), "no figure image"
    assert "Fig. 1" in dom or "Figure 1" in dom, "no numbered figure caption/reference"
    assert "tag_check" in dom, "no check cell"
    assert re.search(r'<div class="[^"]*\bproof\b[^"]*\blemma\b', dom), "no theorem-style (lemma) block"
    assert "widget-slider" in dom, "the embedded widget snapshot did not render offline"
    assert re.search(r"bibliography|Lufkin", dom), "no citation"


def test_errata_and_bibliography_pages_exist():
    for page in ("book/errata", "book/bibliography"):
        assert (SITE / f"{page}.html").exists()
    errata = (SITE / "book" / "errata.html").read_text(encoding="utf-8")
    assert "<table" in errata, "errata page has no table"


class _ErrataLinks(HTMLParser):
    """The headings of the errata page, in order, and the proof links of its tables."""

    def __init__(self):
        super().__init__()
        self.headings, self.links, self._heading, self._in_table = [], [], None, 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("h2", "h3"):
            self._heading = ""
        if tag == "table":
            self._in_table += 1
        if tag == "a" and self._in_table and "reference internal" in (attrs.get("class") or ""):
            self.links.append(attrs.get("href", ""))

    def handle_endtag(self, tag):
        if tag in ("h2", "h3") and self._heading is not None:
            self.headings.append(self._heading.strip().rstrip("#").strip())
            self._heading = None
        if tag == "table":
            self._in_table -= 1

    def handle_data(self, data):
        if self._heading is not None:
            self._heading += data


def test_errata_lists_errors_before_notes_and_every_proof_link_reaches_a_check_cell():
    page = _ErrataLinks()
    page.feed((SITE / "book" / "errata.html").read_text(encoding="utf-8"))
    top = [h for h in page.headings if h in ("Errors in the sources", "Notes on notation and presentation")]
    assert top == ["Errors in the sources", "Notes on notation and presentation"], page.headings
    proofs = [h for h in page.links if "#check-" in h]
    assert len(proofs) >= 20, f"too few proof links on the errata page: {proofs}"
    missing = []
    for href in proofs:
        target, anchor = href.split("#", 1)
        html = (SITE / "book" / target).read_text(encoding="utf-8")
        # The anchor must be a cell tagged `check` (a MyST target right before the cell lands on it).
        match = re.search(rf'<div class="cell tag_check[^"]*" id="{re.escape(anchor)}"', html)
        if match is None:
            missing.append(href)
    assert not missing, f"errata proof links that do not land on a check cell: {missing}"
