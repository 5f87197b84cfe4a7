"""BlobStore contract."""

from __future__ import annotations

import pytest

from knowledge.errors import InvalidInput, NotFound


def test_put_get_list_delete(blob_store):
    blob_store.put("packs/a.ndjson.gz", b"one")
    blob_store.put("packs/b.ndjson.gz", b"two")
    blob_store.put("uploads/x", b"three")
    assert blob_store.get("packs/a.ndjson.gz") == b"one"
    assert blob_store.list("packs/") == ["packs/a.ndjson.gz", "packs/b.ndjson.gz"]
    blob_store.put("packs/a.ndjson.gz", b"replaced")
    assert blob_store.get("packs/a.ndjson.gz") == b"replaced"
    blob_store.delete("packs/a.ndjson.gz")
    assert not blob_store.exists("packs/a.ndjson.gz")
    with pytest.raises(NotFound):
        blob_store.get("packs/a.ndjson.gz")


@pytest.mark.parametrize("key", ["../escape", "/abs", "a/../../b", ""])
def test_keys_cannot_escape(blob_store, key):
    with pytest.raises(InvalidInput):
        blob_store.put(key, b"x")
