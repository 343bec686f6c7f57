"""Normalise an executed chapter into an nbval reference notebook.

Keeps every checked text output; drops what nbval never compares (images, widget views, execution
timing) so references stay small and their diffs stay readable.
"""

import sys

import nbformat

# Output payloads nbval is told to skip (see tests/conftest.py): figures and widget views.
UNCOMPARED = (
    "image/png",
    "image/jpeg",
    "image/svg+xml",
    "application/papermill.record/image/png",
    "application/papermill.record/image/svg+xml",
    "application/vnd.jupyter.widget-view+json",
)


def strip(path: str) -> None:
    nb = nbformat.read(path, as_version=4)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        for output in cell.get("outputs", []):
            for key in UNCOMPARED:
                output.get("data", {}).pop(key, None)
            if "metadata" in output:
                output["metadata"] = {}
    nbformat.write(nb, path)


if __name__ == "__main__":
    for p in sys.argv[1:]:
        strip(p)
