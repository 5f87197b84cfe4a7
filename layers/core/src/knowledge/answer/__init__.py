"""Answer-time operator knowledge (DESIGN.md §7 "Answer time"): what happens after retrieval
and before the response. Nothing here imports the API layer or the retrieval service; the
modules are pure functions plus small use cases taking ``knowledge.ports.Services``.

- ``topics``: the per-bot topic classifier (fees, limits, processing time).
"""
