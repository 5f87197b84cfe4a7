"""Optional: every file of the shared hostile corpus gives text or a typed failure, bounded.

The corpus lives outside the repository (``../shared/data/hostile`` or ``$KB_HOSTILE_CORPUS``);
the test is skipped when it is absent.
"""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest

from knowledge.errors import SOURCE_FAILURE_CODES, Code, SourceFailure
from knowledge.extract import Extracted, extract_file

from .hostile import MB

_REPO = Path(__file__).resolve().parents[3]
CORPUS = Path(os.environ.get("KB_HOSTILE_CORPUS", _REPO.parent / "shared" / "data" / "hostile"))
FILES = sorted(p for p in CORPUS.rglob("*") if p.is_file()) if CORPUS.is_dir() else []


def _is_encrypted_pdf(path: Path) -> bool:
    name = path.name.lower()
    return (
        path.suffix.lower() == ".pdf"
        and not name.startswith("unencrypted")
        and ("encrypt" in name or "password" in name)
    )


@pytest.mark.data
@pytest.mark.timeout(30)
@pytest.mark.parametrize("path", FILES or [None], ids=lambda p: str(p.relative_to(CORPUS)) if p else "absent")
def test_corpus_file_extracts_or_fails_typed(path: Path | None) -> None:
    if path is None:
        pytest.skip(f"hostile corpus not found at {CORPUS}")
    outcome: Extracted | SourceFailure
    tracemalloc.start()
    try:
        try:
            outcome = extract_file(path)
        except SourceFailure as failure:
            outcome = failure
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * MB
    if isinstance(outcome, SourceFailure):
        assert outcome.code in SOURCE_FAILURE_CODES
    else:
        assert isinstance(outcome.text, str)
    if _is_encrypted_pdf(path):
        assert isinstance(outcome, SourceFailure)
        assert outcome.code == Code.MALFORMED_FILE
