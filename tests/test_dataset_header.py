"""A dataset file's object form (case/dataset.py's DatasetHeader): what its top level may declare."""

from __future__ import annotations

import json

import pytest

from tracegrade.core.errors import DatasetError
from tracegrade.case.dataset import load_dataset


def test_a_top_level_version_is_told_how_a_dataset_is_versioned(tmp_path):
    """Issue 47: `"version"` beside the cases gave "field 'version': unknown key (did you mean 'version'?)"."""
    path = tmp_path / "golden.json"
    cases = [{"id": "a", "question": "Where is ORD-1?", "version": 2}]  # a case's own version is fine
    path.write_text(json.dumps({"name": "shop", "version": "2", "cases": cases}))
    with pytest.raises(DatasetError) as refused:
        load_dataset(path)
    said = str(refused.value)
    assert "field 'version'" in said and "did you mean" not in said and "hash of its cases' content" in said
    path.write_text(json.dumps({"name": "shop", "cases": cases}))
    assert len(load_dataset(path).version) == 12
