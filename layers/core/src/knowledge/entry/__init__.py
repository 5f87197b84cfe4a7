"""Entry-point code the Lambda handlers share: translating API Gateway events into the
transport-neutral requests of ``knowledge.api`` and back. It drives use cases, so it lives
here and not among the driven adapters (``knowledge.adapters``)."""
