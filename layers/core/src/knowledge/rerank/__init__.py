"""Rerankers: a second opinion on the first excerpts of a retrieval, scored question by
passage (a cross-encoder reads both together). Optional everywhere: a bot turns it on with its
``rerank`` setting, the deployment provides one (``KB_RERANKER``); without either, retrieval
ranks as before. See :func:`knowledge.retrieve.service.retrieve`."""
