"""Byte strings packed in compressed batches read back as they went in, in any order."""

from __future__ import annotations

import pickle
import random

import pytest

from tracegrade.engine import packed as packed_module
from tracegrade.engine.packed import Packed


def items(n: int) -> list[bytes]:
    rng = random.Random(n)
    return [pickle.dumps({"id": f"case-{i}", "q": "x" * rng.randrange(0, 300), "n": i}) for i in range(n)]


@pytest.mark.parametrize("n, batch", [(0, 4), (1, 4), (4, 4), (5, 4), (130, 64), (64, 1)])
def test_every_item_reads_back_in_order_and_by_index(n, batch):
    data = items(n)
    packed = Packed(data, batch=batch)
    assert len(packed) == n and list(packed) == data
    order = list(range(n))
    random.Random(7).shuffle(order)  # out of order: each read may expand another batch
    assert [packed[i] for i in order] == [data[i] for i in order]
    if n:
        assert packed[-1] == data[-1] and packed[-n] == data[0]


def test_an_index_out_of_range_is_an_index_error():
    packed = Packed(items(3), batch=2)
    for index in (3, -4):
        with pytest.raises(IndexError):
            packed[index]


def test_batches_hold_less_than_the_items_alone():
    data = items(640)
    packed = Packed(data)
    assert packed.compressed_bytes < sum(len(d) for d in data) / 3
    assert Packed(data).same_as(packed) and not Packed(data[:-1]).same_as(packed)


@pytest.mark.parametrize("n", [1, 64, 300])
def test_batches_past_the_spill_size_are_read_back_from_a_file_and_memory_keeps_none(monkeypatch, n):
    monkeypatch.setattr(packed_module, "SPILL_BYTES", 10)  # the first batch already passes it
    data = items(n)
    packed = Packed(data, batch=8)
    assert packed._file is not None and len(packed._memory) == 0  # WHY: what a large run holds to its end
    assert list(packed) == data and [packed[i] for i in reversed(range(n))] == data[::-1]
    assert Packed(data, batch=8).same_as(packed) and not Packed(data[:-1], batch=8).same_as(packed)
    again = pickle.loads(pickle.dumps(packed))  # the items travel, not the file
    assert list(again) == data
