"""Normalise an executed chapter into an nbval reference notebook.

Keeps every checked text output; drops what nbval never compares (images, widget views, execution
timing, and every measured value written by ``localization.book.glue_measured`` / ``show_measured``)
so references stay small, their diffs stay readable, and no seed- or machine-dependent number is
stored as text to compare.
"""

import sys

import nbformat

from localization.book import ACCURACY_METADATA_KEY, is_measured_output

# Output payloads nbval is told to skip (see tests/conftest.py): figures and widget views.
UNCOMPARED = (
    "image/png",
    "image/jpeg",
    "image/svg+xml",
    "application/papermill.record/image/png",
    "application/papermill.record/image/svg+xml",
    "application/vnd.jupyter.widget-view+json",
)


def coalesce_streams(outputs: list) -> list:
    """Merge consecutive stream outputs of the same stream: the kernel splits one print into chunks
    at random points, and the reference should not depend on where (nbval compares the merged text)."""
    merged = []
    for out in outputs:
        if (
            merged
            and out.get("output_type") == "stream"
            and merged[-1].get("output_type") == "stream"
            and merged[-1].get("name") == out.get("name")
        ):
            merged[-1]["text"] = merged[-1]["text"] + out["text"]
        else:
            merged.append(out)
    return merged


def strip(path: str) -> None:
    nb = nbformat.read(path, as_version=4)
    nb.metadata.pop("widgets", None)
    for index, cell in enumerate(nb.cells):
        cell.id = f"cell-{index}"  # stable ids: a regenerated reference diffs only where outputs changed
        cell.metadata.pop("execution", None)
        if "outputs" in cell:
            cell.outputs = coalesce_streams([out for out in cell.outputs if not is_measured_output(out)])
        for output in cell.get("outputs", []):
            for key in UNCOMPARED:
                output.get("data", {}).pop(key, None)
            if "metadata" in output:
                # only the stated accuracy of an exact value is kept: nbval compares at it
                accuracy = output["metadata"].get(ACCURACY_METADATA_KEY)
                output["metadata"] = {} if accuracy is None else {ACCURACY_METADATA_KEY: accuracy}
    nbformat.write(nb, path)


if __name__ == "__main__":
    for p in sys.argv[1:]:
        strip(p)
