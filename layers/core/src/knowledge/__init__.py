"""kb core library: knowledge sources -> permission-aware passages -> grounded excerpts.

Everything that decides anything lives here; Lambda handlers and the embedded server only
parse input, call one use case and shape the reply.
"""

__version__ = "0.1.0"
