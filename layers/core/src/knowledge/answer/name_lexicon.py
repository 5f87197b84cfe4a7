"""Word lists that tell a person's name from an ordinary word, loaded once on first use.

- given names and surnames: the US census lists shipped by the ``names`` package (MIT);
- ordinary words: the words Webster's word list (``english-words``, MIT) spells in lower case,
  so "will", "may", "grant" or "mark" are ordinary while "Kevin" or "Robert" (listed only
  capitalised there) are not.

All three are sets of lower-case words without apostrophes (``O'Malley`` is ``omalley``).
"""

from __future__ import annotations

import functools
from importlib import resources


@functools.cache
def _census(name: str) -> frozenset[str]:
    text = resources.files("names").joinpath(name).read_text(encoding="ascii")
    return frozenset(line.split(None, 1)[0].lower() for line in text.splitlines() if line.strip())


@functools.cache
def given_names() -> frozenset[str]:
    return _census("dist.male.first") | _census("dist.female.first")


@functools.cache
def surnames() -> frozenset[str]:
    return _census("dist.all.last")


@functools.cache
def ordinary_words() -> frozenset[str]:
    from english_words import get_english_words_set

    return frozenset(get_english_words_set(["web2"], alpha=True, lower=False))


def key(word: str) -> str:
    """The form a word is looked up in: lower case, apostrophes and hyphens dropped."""
    return "".join(c for c in word.lower() if c.isalpha())
