"""Entry-point code the Lambda handlers share: Powertools set up one way (``observability``)
and the translation of API Gateway events into the transport-neutral requests of
``knowledge.api`` and back (``apigateway``). It belongs to the entry points, not to the driven
adapters (``knowledge.adapters``)."""
