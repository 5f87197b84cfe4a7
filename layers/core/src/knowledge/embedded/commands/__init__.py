"""The ``kb`` commands, one module per kind of work: ``indexing`` (ingest, reindex),
``query`` (search, eval, gaps), ``admin`` (tokens, bot settings, sources, AWS bootstrap),
``serving`` (serve, mcp), ``inspection`` (chunk, extract); ``common`` holds what they share.
The parser and ``main`` are in :mod:`knowledge.embedded.cli`."""
