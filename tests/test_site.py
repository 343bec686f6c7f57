"""Checks of the built site (``_build/html``) in headless Chromium, with the network cut off.

Run after ``jupyter-book build``. A missing browser or a missing build is a failure, never a skip:
``make test`` finds Chrome or Chromium first (``tools/find_browser.py``; as root on Debian it installs
Chromium when none is found, elsewhere it says what to install). Two ways to drive the browser: ``render`` dumps a
page's DOM after its scripts ran (``--dump-dom``); :class:`Browser` talks to one Chromium over the
DevTools protocol to set the window width, measure the laid-out page and take screenshots, which it
keeps under ``_build/screenshots/`` for review.
"""

import base64
import importlib.util
import json
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest
import websocket  # websocket-client, installed with jupyter_server (jupyterlab)
import yaml

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
SCREENSHOTS = ROOT / "_build" / "screenshots"
WIDTHS = (1280, 400)  # desktop and phone window widths (CSS px) every page must read well at


def _toc_pages():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    pages = [toc["root"]]
    for part in toc.get("parts", []):
        pages += [c["file"] for c in part.get("chapters", [])]
    return pages


PAGES = _toc_pages()


def _chromium():
    """The browser ``make browser`` found (tools/find_browser.py: $CHROME, the usual names, macOS apps)."""
    spec = importlib.util.spec_from_file_location("find_browser", ROOT / "tools" / "find_browser.py")
    finder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(finder)
    exe = finder.find()
    assert exe, finder.instructions()
    return exe


def _offline_chromium(profile):
    return [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        # No network at all: names do not resolve and the proxy is a closed local port.
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--proxy-server=127.0.0.1:9",
        "--allow-file-access-from-files",
    ]


@pytest.mark.parametrize("page", PAGES)
def test_no_explorer_is_printed_as_text(page):
    """An explorer shows its pictures once; its HTML must never come back as a cell's text value."""
    source = (SITE / f"{page}.html").read_text(encoding="utf-8")
    text_outputs = re.findall(r'<div class="output text_plain[\s\S]*?</pre>', source)
    leaked = [t[:120] for t in text_outputs if "loc-explorer" in t or "&lt;style&gt;" in t]
    assert not leaked, f"{page}: an explorer's HTML printed as text: {leaked}"


def _page_file(page: str) -> Path:
    html = SITE / f"{page}.html"
    assert html.exists(), f"{html} missing: build the book first"
    return html


def render(page: str) -> str:
    """The DOM of a built page after scripts ran, with every network request refused."""
    html = _page_file(page)
    with tempfile.TemporaryDirectory() as profile:
        cmd = [*_offline_chromium(profile), "--virtual-time-budget=20000", "--dump-dom", html.as_uri()]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


class Browser:
    """One headless Chromium (network cut off as in :func:`render`) driven over the DevTools protocol.

    ``open(page, width)`` loads a built page in a window ``width`` CSS px wide (device scale 1) and
    waits until MathJax has typeset it and web fonts are in; ``evaluate`` runs JavaScript in it and
    returns the value; ``screenshot`` writes PNGs of the whole page. Protocol events (console
    messages, failed requests) collect in ``events`` from the last ``open`` on.
    """

    def __init__(self, timeout: float = 60.0):
        self._profile = tempfile.mkdtemp(prefix="chromium-")
        cmd = [*_offline_chromium(self._profile), "--remote-debugging-port=0", "about:blank"]
        self._proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = Path(self._profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and len(port_file.read_text().split()) >= 2):
            assert self._proc.poll() is None, "chromium exited at start-up"
            assert time.monotonic() < deadline, "chromium did not open its DevTools port within 30 s"
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        no_proxy = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with no_proxy.open(f"http://127.0.0.1:{port}/json/list", timeout=10) as reply:
            target = next(t for t in json.load(reply) if t["type"] == "page")
        self._ws = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=timeout, suppress_origin=True)
        self._id = 0
        self.events: list[dict] = []
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.call(f"{domain}.enable")

    def close(self) -> None:
        self._ws.close()
        self._proc.terminate()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=10)
        shutil.rmtree(self._profile, ignore_errors=True)

    def call(self, method: str, **params):
        """Send one protocol command and return its result (events seen meanwhile go to ``events``)."""
        self._id += 1
        self._ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            message = json.loads(self._ws.recv())
            if message.get("id") == self._id:
                assert "error" not in message, f"{method}: {message['error']}"
                return message["result"]
            self.events.append(message)

    def wait_for(self, event: str) -> dict:
        """The first protocol event named ``event`` since the last ``open`` (waiting for it if needed)."""
        while True:
            for message in self.events:
                if message.get("method") == event:
                    return message
            self.events.append(json.loads(self._ws.recv()))

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (promises are awaited)."""
        reply = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in reply, f"{expression[:80]}...: {reply['exceptionDetails']}"
        return reply["result"].get("value")

    def open(self, page: str, width: int, height: int = 900) -> None:
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        self.events = []
        self.call("Page.navigate", url=_page_file(page).as_uri())
        self.wait_for("Page.loadEventFired")
        self.evaluate(
            "(async () => { if (window.MathJax && MathJax.startup) await MathJax.startup.promise;"
            " await document.fonts.ready; await new Promise(r => setTimeout(r, 300)); })()"
        )

    def screenshot(self, path: Path, tile: int = 8000) -> list[Path]:
        """The whole page as PNGs (``path``, then ``path-2.png``...), in equal tiles of at most ``tile`` px
        (equal, so that no tile is a thin leftover strip of the page's foot)."""
        size = self.call("Page.getLayoutMetrics")["cssContentSize"]
        width, height = int(size["width"]), int(size["height"])
        tiles = max(1, -(-height // tile))  # ceil(height / tile)
        step = max(1, -(-height // tiles))
        files = []
        for k, top in enumerate(range(0, height, step)):
            clip = {"x": 0, "y": top, "width": width, "height": min(step, height - top), "scale": 1}
            shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True, clip=clip)
            out = path if k == 0 else path.with_name(f"{path.stem}-{k + 1}{path.suffix}")
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(base64.b64decode(shot["data"]))
            files.append(out)
        return files


@pytest.fixture(scope="module")
def browser():
    b = Browser()
    yield b
    b.close()


# Every display equation (MathJax output, `mjx-container[display="true"]`) with its TeX source, its
# laid-out width, the width of its content (wider content would need a scroll bar) and the width of
# its parent block (Sphinx's div.math, which also holds the equation number).
MEASURE_DISPLAY_MATH = """(() => {
  if (!window.MathJax) return [];
  const tex = new Map();
  for (const item of MathJax.startup.document.math) tex.set(item.typesetRoot, item.math);
  return Array.from(document.querySelectorAll('mjx-container[display="true"]'), (c) => {
    const box = c.getBoundingClientRect(), parent = c.parentElement.getBoundingClientRect();
    const eqno = c.parentElement.querySelector('.eqno');
    return {tex: (tex.get(c) || '').trim(), number: eqno ? eqno.textContent.trim() : '',
            content: c.scrollWidth, width: c.clientWidth, parent: parent.width,
            inside: box.left >= parent.left - 0.5 && box.right <= parent.right + 0.5};
  });
})()"""


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
    assert 'class="loc-explorer"' in dom, "no explorer on the landing page"
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


_MEASURED: dict = {}


def measured(browser: Browser, page: str, width: int) -> dict:
    """Display math, tables and figures of a page at a window width, measured in one visit (cached);
    at 1280 px also the screenshots for review."""
    if (page, width) not in _MEASURED:
        browser.open(page, width)
        desktop = width == 1280
        _MEASURED[page, width] = {
            "console": console_problems(browser.events),
            "math": browser.evaluate(MEASURE_DISPLAY_MATH),
            "tables": browser.evaluate(MEASURE_TABLES) if desktop else [],
            "figures": browser.evaluate(MEASURE_FIGURES),
            "screenshots": browser.screenshot(SCREENSHOTS / f"{page.replace('/', '_')}.png") if desktop else [],
        }
    return _MEASURED[page, width]


def console_problems(events: list[dict]) -> list[str]:
    """Console errors, uncaught exceptions and failed requests among DevTools protocol events."""
    problems = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            problems.append(f"exception: {details.get('exception', {}).get('description', details.get('text'))}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            problems.append(
                "console.error: " + " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
            )
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            problems.append(f"log: {params['entry']['text']} ({params['entry'].get('url', '')})")
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            problems.append(f"request failed: {params.get('errorText')} (request {params.get('requestId')})")
    return problems


@pytest.mark.parametrize("page", PAGES)
def test_page_has_no_console_errors_or_failed_requests(browser, page):
    """With the network cut off, loading a page logs no error, throws nothing and no request fails."""
    problems = measured(browser, page, 1280)["console"]
    assert not problems, f"{page}:\n" + "\n".join(problems)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page", PAGES)
def test_display_math_fits_its_column(browser, page, width):
    """No display equation is wider than its column (nor needs a scroll bar) at desktop and phone
    widths: long equations are split over lines."""
    equations = measured(browser, page, width)["math"]
    too_wide = [
        f"{e['number'] or '(unnumbered)'} needs {e['content']} px, has {e['width']} px: {e['tex'][:70]!r}"
        for e in equations
        if e["content"] > e["width"] + 1 or e["width"] > e["parent"] + 1 or not e["inside"]
    ]
    assert not too_wide, f"{page} at {width} px:\n" + "\n".join(too_wide)


@pytest.mark.parametrize("page", PAGES)
def test_screenshot_for_review(browser, page):
    """A screenshot of each page at 1280 px, kept under _build/screenshots/ (not a check of its looks)."""
    for shot in measured(browser, page, 1280)["screenshots"]:
        assert shot.stat().st_size > 10_000, f"{shot} is (nearly) empty"


# Tables: a header word wider than its column (it would be broken mid-word, "Sourc e") and a formula
# wider than its cell, or reaching out of it (clipped by the cell or by its span.math wrapper).
MEASURE_TABLES = """(() => {
  const problems = [];
  const room = (cell) => {
    const cs = getComputedStyle(cell), r = cell.getBoundingClientRect();
    return {left: r.left + parseFloat(cs.paddingLeft), right: r.right - parseFloat(cs.paddingRight)};
  };
  for (const th of document.querySelectorAll('.bd-article table th')) {
    const r = room(th);
    for (const word of th.textContent.split(/\\s+/).filter(Boolean)) {
      const probe = document.createElement('span');
      probe.style.whiteSpace = 'nowrap';
      probe.textContent = word;
      th.appendChild(probe);
      const width = probe.getBoundingClientRect().width;
      probe.remove();
      if (width > r.right - r.left + 0.5)
        problems.push(`header word "${word}" needs ${Math.ceil(width)} px, has ${Math.floor(r.right - r.left)} px`);
    }
  }
  for (const svg of document.querySelectorAll('.bd-article table mjx-container > svg')) {
    const cell = svg.closest('td, th'), r = room(cell), box = svg.getBoundingClientRect();
    const h = (svg.closest('span.math') || cell).getBoundingClientRect();  // span.math clips what sticks out
    if (box.left < Math.max(r.left, h.left) - 0.5 || box.right > Math.min(r.right, h.right) + 0.5)
      problems.push(`formula ${Math.ceil(box.width)} px wide in a ${Math.floor(r.right - r.left)} px cell: ` +
                    (svg.closest('mjx-container').getAttribute('aria-label') || cell.textContent).slice(0, 70));
  }
  return problems;
})()"""


@pytest.mark.parametrize("page", PAGES)
def test_tables_read_whole_at_desktop_width(browser, page):
    """At 1280 px no table header is broken inside a word and no formula in a table is clipped."""
    problems = measured(browser, page, 1280)["tables"]
    assert not problems, f"{page}:\n" + "\n".join(problems)


# Figure images: their natural width (pixels of the PNG) and the width they are shown at.
MEASURE_FIGURES = """Array.from(document.querySelectorAll('.bd-article img'), (img) => {
  const caption = img.closest('figure') && img.closest('figure').querySelector('figcaption');
  return {src: img.getAttribute('src').split('/').pop(), natural: img.naturalWidth,
          shown: img.getBoundingClientRect().width,
          caption: parseFloat(getComputedStyle(caption || document.querySelector('.bd-article p')).fontSize)};
})"""

# Chapters whose figures are still wider than the column (see tests/test_plotting.py).
WIDE_FIGURES_PENDING: set[str] = set()


@pytest.mark.parametrize("page", PAGES)
def test_every_image_loads(browser, page):
    """Every image of the article (figures and explorer frames) decoded to a picture with a width."""
    broken = [f["src"][:60] for f in measured(browser, page, 1280)["figures"] if not f["natural"]]
    assert not broken, f"{page}: images that did not load: {broken}"


@pytest.mark.parametrize("page", PAGES)
def test_figure_text_is_not_smaller_than_captions(browser, page):
    """Figures are drawn with text of at least plotting.FONT_SIZE points at plotting.FIGURE_DPI, that
    is CAPTION_PX pixels at natural size; shown scaled down by s, their text is s times smaller. At
    1280 px no figure may be shown so small that its text falls below the caption text of the page."""
    from localization import plotting

    figures = measured(browser, page, 1280)["figures"]
    natural_text = plotting.FONT_SIZE * plotting.FIGURE_DPI / 72
    small = [
        f"{f['src'][:16]}: {f['natural']} px shown at {f['shown']:.0f} px, text "
        f"{natural_text * f['shown'] / f['natural']:.1f} px < caption {f['caption']:.0f} px"
        for f in figures
        if f["natural"] and natural_text * f["shown"] / f["natural"] < f["caption"] - 0.25
    ]
    if page in WIDE_FIGURES_PENDING:
        if not small:
            pytest.fail(f"{page} now passes: remove it from WIDE_FIGURES_PENDING")
        pytest.xfail("\n".join(small))
    assert not small, f"{page}:\n" + "\n".join(small)


# Explorers (localization.explorer): the frames and rules of each one, and what its page shows now.
EXPLORER_SPECS = """Array.from(document.querySelectorAll('.loc-explorer'), (e) =>
  ({id: e.id, spec: JSON.parse(e.querySelector('script[type="application/json"]').textContent)}))"""
EXPLORER_STATE = """((id) => {
  const root = document.getElementById(id);
  return {src: root.querySelector('img').getAttribute('src'),
          shown: root.querySelector('.loc-explorer-values').textContent,
          controls: Array.from(root.querySelectorAll('[data-control]'), (box) => {
            const input = box.querySelector('input');
            const pressed = Array.from(box.querySelectorAll('button'),
                                       (b) => b.getAttribute('aria-pressed') === 'true');
            return {name: box.dataset.control, hidden: box.hidden,
                    index: input ? Number(input.value) : pressed.indexOf(true),
                    output: input ? box.querySelector('output').textContent : null};
          })};
})"""
# Where to click: the centre of the j-th button of a control, or a fraction of a slider's track (the
# element is scrolled to the middle of the window first, so the point is inside the viewport).
EXPLORER_TARGET = """((id, name, j, fraction) => {
  const box = document.getElementById(id).querySelector('[data-control="' + name + '"]');
  const el = j === null ? box.querySelector('input') : box.querySelectorAll('button')[j];
  el.scrollIntoView({block: 'center'});
  const r = el.getBoundingClientRect();
  return {x: j === null ? r.left + fraction * r.width : r.left + r.width / 2, y: r.top + r.height / 2};
})"""


def _click(browser: Browser, x: float, y: float) -> None:
    """A real mouse click (press and release of the left button) at viewport point (x, y)."""
    for kind in ("mousePressed", "mouseReleased"):
        browser.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)


def _check_explorer_state(spec: dict, state: dict, where: str) -> tuple[int, ...]:
    """The page shows what the frames say: the picture is the frame of the controls' stops, each
    slider shows the label of its stop, and exactly the controls that apply are visible."""
    controls = spec["controls"]
    index = {c["name"]: state_c["index"] for c, state_c in zip(controls, state["controls"], strict=True)}
    values = {c["name"]: c["values"][index[c["name"]]] for c in controls}
    for c, shown in zip(controls, state["controls"], strict=True):
        applies = all(values[s] in allowed for s, allowed in c["when"].items())
        assert shown["hidden"] == (not applies), f"{where}: control {c['name']} hidden={shown['hidden']}"
        if c["kind"] == "slider":
            assert shown["output"] == c["labels"][shown["index"]], f"{where}: {c['name']} shows {shown['output']}"
            if applies:
                assert f"{c['description']} = {shown['output']}" in state["shown"], f"{where}: {state['shown']}"
    key = "-".join(str(index[c["name"]]) for c in controls)
    assert key in spec["frames"], f"{where}: no frame {key}"
    assert state["src"] == spec["frames"][key], f"{where}: the picture is not the frame of {key}"
    return tuple(index[c["name"]] for c in controls)


class _ExplorerDriver:
    """One explorer on the open page: real clicks on its controls, and the state checked after each."""

    def __init__(self, browser: Browser, page: str, ident: str, spec: dict):
        self.browser, self.where, self.ident, self.spec = browser, f"{page} {ident}", ident, spec
        self.names = [c["name"] for c in spec["controls"]]
        self.stops = self.state("on load")

    def state(self, event: str) -> tuple[int, ...]:
        shown = self.browser.evaluate(f"{EXPLORER_STATE}({json.dumps(self.ident)})")
        return _check_explorer_state(self.spec, shown, f"{self.where} {event}")

    def click(self, control: dict, button: int | None = None, fraction: float = 0.0) -> tuple[int, ...]:
        """Click button ``button`` of a choice, or a slider's track at ``fraction`` of its width."""
        args = ", ".join(json.dumps(x) for x in (self.ident, control["name"], button, fraction))
        point = self.browser.evaluate(f"{EXPLORER_TARGET}({args})")
        _click(self.browser, point["x"], point["y"])
        where = (
            f"after {control['name']} = {control['labels'][button]}"
            if button is not None
            else (f"after dragging {control['name']} to {fraction:.0%}")
        )
        before, self.stops = self.stops, self.state(where)
        if self.stops != before:
            frame = self.spec["frames"]["-".join(map(str, self.stops))]
            assert frame != self.spec["frames"]["-".join(map(str, before))], (
                f"{self.where}: moving {control['name']} did not change the picture"
            )
        return self.stops

    def drag_visible_sliders(self) -> None:
        """Each slider shown for the current choice, clicked near its right end, then its left end."""
        shown = self.browser.evaluate(f"{EXPLORER_STATE}({json.dumps(self.ident)})")["controls"]
        for control, box in zip(self.spec["controls"], shown, strict=True):
            if control["kind"] != "slider" or box["hidden"]:
                continue
            for fraction, target in ((0.98, len(control["labels"]) - 1), (0.02, 0)):
                stop = self.click(control, fraction=fraction)[self.names.index(control["name"])]
                assert stop == target, f"{self.where}: {control['name']} at stop {stop}, expected {target}"


def test_every_explorer_changes_its_figure_when_a_control_is_moved(browser):
    """On every page, each explorer answers real mouse input with the right precomputed frame: every
    button of every choice, and each slider that applies to it dragged to both ends."""
    found = 0
    for page in PAGES:
        if 'class="loc-explorer"' not in _page_file(page).read_text(encoding="utf-8"):
            continue
        browser.open(page, 1280)
        for explorer in browser.evaluate(EXPLORER_SPECS):
            found += 1
            driver = _ExplorerDriver(browser, page, explorer["id"], explorer["spec"])
            assert len(driver.spec["frames"]) >= 2, f"{driver.where}: fewer than two frames"
            choices = [c for c in driver.spec["controls"] if c["kind"] == "buttons"]
            if not choices:
                driver.drag_visible_sliders()
            for choice in choices:
                for button in range(len(choice["labels"])):
                    stops = driver.click(choice, button=button)
                    assert stops[driver.names.index(choice["name"])] == button
                    driver.drag_visible_sliders()
        assert not console_problems(browser.events), f"{page}: {console_problems(browser.events)}"
    assert found >= 5, f"only {found} explorers on the site"
