"""Redaction of personal and secret data in ticket text, before anything else sees it
(logs included): the text is redacted first and only the redacted text travels on.

Each kind has a detector; where a checksum or a numbering plan exists a well-kept library
decides (``phonenumbers`` for telephone numbers, ``python-stdnum`` for card numbers (Luhn),
IBANs and Bitcoin addresses, the personal identity numbers of many countries, ``ipaddress``
for IP addresses; a BLAKE2b checksum for SS58 addresses); patterns only propose candidates.
Spans found by several detectors go to the best-ranked kind (``_PRIORITY``).

Who wrote a text matters: in a customer's own message (``speaker="customer"``) every amount is
the customer's unless it reads as a policy figure, a code after a word for an account is theirs,
and a number a strong identity-number check accepts is one with no word before it.

People's names, dates of birth and user names have no checksum: they are found by the words
around them ("my name is", "account holder", a greeting or title, a signature closing a turn;
"born", "DOB"; "username", an ``@handle``, ``name#1234``). Names nothing introduces are found
by word lists (``name_lexicon``): a capitalised listed given name or surname that is no
ordinary English word. No language model is loaded here.

Modules, each a group of detectors over one kind of data (a module imports only those above it):

- ``spans``: ``Span``, ``Redaction``, ``KINDS`` and their ranking, helpers several detectors share;
- ``words``: the word lists and word tests the name and user-name detectors share;
- ``phones``, ``payment`` (cards, card codes, IBANs, wallets), ``id_documents`` (machine-readable
  zones and the identity numbers with their own check digits), ``ids`` (national identity
  numbers, identity documents, account numbers, references), ``contact`` (e-mails, IPs, street
  addresses), ``secrets`` (tokens, passwords, webhooks, seed phrases);
- ``names`` (names after a cue, and the rules over every name span), ``context_names`` (names read
  from their context and in other scripts), ``lexicon_names`` (names no cue introduces);
- ``users`` (user names and handles), ``currencies`` (every locale's currency words, symbols and
  scales) and ``money`` (amounts and money tables), ``people`` (names, dates of birth and user
  names found together), ``documents`` (pasted documents' name fields, OCR'd letter by letter,
  CSV columns, file names, query strings);
- ``find``: ``find_spans``, ``redact``, ``names_in``, ``vocabulary_candidates``, and what a ticket's
  messages tell of each other (``asked_in``, ``repeated_values``).
"""

from __future__ import annotations

from .find import (
    asked_in,
    find_spans,
    names_in,
    recurs_in,
    redact,
    repeated_values,
    replaced,
    signed_names,
    vocabulary_candidates,
)
from .spans import DEFAULT_PHONE_REGIONS, KINDS, Redaction, Span

__all__ = ["DEFAULT_PHONE_REGIONS", "KINDS", "Redaction", "Span", "asked_in", "find_spans", "names_in", "recurs_in",
           "redact", "repeated_values", "replaced", "signed_names", "vocabulary_candidates"]
