"""Embedders: one port (``knowledge.ports.Embedder``), several adapters, chosen per bot.

- ``none``: no vectors; retrieval is lexical + the corpus-learned rescue (embedded default).
- ``hashing``: deterministic feature hashing of analysed terms — for tests and air-gapped
  smoke runs; it knows no synonyms.
- ``local``: all-MiniLM-L6-v2 on the CPU through sentence-transformers (optional extra).
- ``openai``: the bot's OpenAI-compatible integration (base URL + key).
- ``bedrock``: Amazon Titan Text Embeddings V2 (``knowledge.adapters.aws``).

Every embedder has a ``name`` that identifies its vector space (model and dimensions):
vectors are only ever compared with a question embedded by the embedder of the same name.
"""

from .factory import (
    EMBEDDER_CHOICES,
    EmbedderUnavailable,
    bot_embedder,
    build_embedder,
    check_embedder,
    embed_in_batches,
)

__all__ = ["EMBEDDER_CHOICES", "EmbedderUnavailable", "bot_embedder", "build_embedder", "check_embedder",
           "embed_in_batches"]
