"""How reports and the view name a run's dataset.

    >>> from tracegrade.core.results import Manifest
    >>> dataset_label(Manifest("r1", "library.json", "v1", 2, "t", "m", None, None,
    ...                        settings={"datasetName": "city-library"}))
    'city-library (library.json)'
"""

from __future__ import annotations

from tracegrade.core.results import Manifest


def dataset_label(manifest: Manifest) -> str:
    """The dataset's declared name with its file, or the file alone (runs stored before names were)."""
    name = manifest.settings.get("datasetName")
    if not isinstance(name, str) or not name or name == manifest.dataset:
        return manifest.dataset
    return f"{name} ({manifest.dataset})"
