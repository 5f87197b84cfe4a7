"""Answer-time operator knowledge (DESIGN.md §7 "Answer time"): what happens after retrieval
and before the response. Nothing here imports the API layer or the retrieval service; the
modules are pure functions, and ``service`` holds the small use cases over ``Services``.

Modules:

- ``topics``: the per-bot topic classifier (fees, limits, processing time; terms overridable).
- ``live``: live data tables (row model, composition rules, the ``LiveReader`` interface).
- ``endpoint``: live tables read from an operator's HTTPS endpoint (guarded, bounded, cached).
- ``gate``: the topic gate (an operator-authored excerpt on the topic must be served).
- ``redact``: removal of personal and secret data; ``tickets``: a ticket as a draft article.
- ``gaps``: gap records and their clustering (the record itself, ``GapRecord``, is in ``knowledge.model``).
- ``service``: the use cases below.

Where each is called (one call per site; ``at`` is the object ``prepare`` returns):

``retrieve/service.py::retrieve`` —
    ``at = answer.service.prepare(services, req.bot, req.q, req.audience, bot_settings=settings)``
    after ``retrieval_view``; then, once the excerpts are final and *before* the retrieval is
    recorded (so live excerpts can be cited), ``excerpts = at.add_live(excerpts, MAX_EXCERPTS)``;
    last, on the response dict, ``at.finish(response)``, which sets ``topic`` and ``gate``,
    turns ``wouldAnswer`` off when the gate failed, and records a gap when the answer is
    nothing, below the floor, or gated (``finish(response, record_gap=False)`` for
    ``retrieval-test`` and for re-checks).
``PUT live/{table}`` —
    ``answer.service.replace_live_table(services, bot, table, body)`` (the reply is its dict).
``GET gaps?audience=&since=`` —
    ``{"clusters": answer.service.gap_clusters(services, bot, audience, since, embed=...)}``
    (``embed``: the bot's embedder's ``embed`` when it has one).
``POST gaps/recheck`` —
    ``answer.service.recheck_gaps(clusters, ask)`` with ``ask(q)`` running the retrieval
    above with ``record_gap=False``.
``POST articles/from-ticket`` —
    ``draft = answer.tickets.draft_from_ticket(body["messages"], body["title"])`` first (it
    validates and redacts before anything else reads the text), then the source-creation use
    case with ``draft.source_body()`` (an article in state ``draft``); reply with the source
    and ``{"redacted": draft.redacted}``. Never log the request body of this route.
``POST sources`` (type ``live``) —
    visibility ``agent`` or ``operator`` (``live.LIVE_VISIBILITIES``); config
    ``{"tables": [...], "fullList": "https://… or a label", "endpoint": "https://…"}``, all
    optional; weight 1.3 (``live.LIVE_WEIGHT``); nothing to index. An ``endpoint`` is read
    at answer time by ``endpoint.EndpointLiveReader`` (the outbound guard, 1 s, cached at
    most 30 s); a source that cannot be read is listed in the response's ``liveUnavailable``.

Bot settings: ``PATCH settings`` with ``{"answer": {...}}`` (``api.models.AnswerSettings``)
stores the ``answer`` dict on the bot's settings; ``service.answer_settings`` reads it:
``{"topics": ..., "context": ..., "extraContext": ..., "gate": false, "gapRetentionDays": 30}``.
"""
