"""The search page's ranking and snippets: ``_assets/search_scorer.js`` as Sphinx's search scorer.

Sphinx reads ``html_search_scorer`` relative to the directory the build is started from, not to
the book, so the path is set here, from the book's own directory, unless ``_config.yml`` sets one.
The scorer ranks chapters above API objects and writes formulas in result snippets as readable
text (the file's header says how).
"""

from pathlib import Path

SCORER = Path(__file__).resolve().parents[1] / "_assets" / "search_scorer.js"


def _use_book_scorer(app, config) -> None:
    if not config.html_search_scorer:
        config.html_search_scorer = str(SCORER)


def setup(app):
    """Register the extension with Sphinx: point ``html_search_scorer`` at the book's scorer."""
    app.connect("config-inited", _use_book_scorer)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
