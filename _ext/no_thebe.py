"""Leave sphinx-thebe's assets out of every page.

Jupyter Book always loads sphinx-thebe, and sphinx-thebe adds its configuration script once per
build pass, so pages declared ``const THEBE_JS_URL`` twice: a console error on every page. The book
runs no code in the browser (``launch_buttons: thebe: false``; explorers are precomputed), so the
thebe configuration, its loader and its style are dropped from the page context instead.
"""


def _is_thebe(asset) -> bool:
    name = str(getattr(asset, "filename", asset) or "")
    body = str(getattr(asset, "attributes", {}).get("body", ""))
    return "sphinx-thebe" in name or "THEBE_JS_URL" in body


def _drop_thebe(app, pagename, templatename, context, doctree):
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [asset for asset in context[key] if not _is_thebe(asset)]


def setup(app):
    """Register the extension with Sphinx: drop Thebe from every page after the theme adds it."""
    app.connect("html-page-context", _drop_thebe, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
