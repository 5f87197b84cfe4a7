"""Presigned uploads: a file source's bytes sent straight to the blob store.

API Gateway and Lambda cap a request near 6 MB (less after base64), below the 8 MB a file
source may hold. ``upload_url`` hands the client a short-lived presigned POST for one key,
``incoming/<bot>/<source>``, on which the store itself enforces the size range and the
source's content type. The store's object-created event then reaches ``take_incoming``,
which runs the direct upload's own checks (:func:`knowledge.lifecycle.upload_file`: same
codes), moves the bytes to the source's upload key and queues the refresh.

A deployment without an :class:`~knowledge.ports.UploadSigner` (the embedded server, whose
own upload route has no such cap) answers ``not_supported``: the client sends the file to
``POST .../upload`` instead.
"""

from __future__ import annotations

import logging
from typing import Any

from ..errors import Code, Conflict, InvalidInput, KnowledgeError, NotFound, SourceFailure
from ..ports import Services
from ..sources.base import incoming_upload_key, incoming_upload_of_key
from . import MAX_UPLOAD_BYTES, NOT_A_FILE_SOURCE, get_source, upload_file

log = logging.getLogger(__name__)

#: how long a presigned upload stays usable
UPLOAD_URL_SECONDS = 300
#: this deployment takes files through ``POST .../upload`` only (HTTP 400)
NOT_SUPPORTED = "not_supported"
#: content type of a file source created without one (the validation requires one today)
DEFAULT_CONTENT_TYPE = "application/octet-stream"


def upload_url(services: Services, bot: str, source_id: str) -> dict[str, Any]:
    """A presigned POST for the file of ``source_id``: ``{"url", "method", "fields",
    "expiresIn", "maxBytes", "contentType"}``."""
    source = get_source(services, bot, source_id)
    if source.type != "file":
        raise Conflict("only file sources take uploads", code=NOT_A_FILE_SOURCE)
    signer = services.upload_signer
    if signer is None:
        raise InvalidInput("this deployment takes files through POST .../upload only", code=NOT_SUPPORTED)
    content_type = str(source.config.get("contentType") or DEFAULT_CONTENT_TYPE)
    post = signer.presign_upload(incoming_upload_key(bot, source_id), content_type=content_type,
                                 max_bytes=MAX_UPLOAD_BYTES, expires_in=UPLOAD_URL_SECONDS)
    return {"url": post["url"], "method": "POST", "fields": post["fields"], "expiresIn": UPLOAD_URL_SECONDS,
            "maxBytes": MAX_UPLOAD_BYTES, "contentType": content_type}


def take_incoming(services: Services, key: str, size: int | None = None) -> dict[str, Any]:
    """Handle the object-created event of ``key``. Returns ``{"status", ...}``: ``queued`` or
    ``stored`` (the upload was taken), ``refused`` (its error code is recorded on the source,
    the only place a client that uploaded straight to the store can read it), ``ignored``
    (not an incoming key, an unknown source, or an event delivered again after the object was
    taken)."""
    parsed = incoming_upload_of_key(key)
    if parsed is None:
        return {"status": "ignored", "key": key[:200]}
    bot, source_id = parsed
    try:
        try:
            if size is not None and size > MAX_UPLOAD_BYTES:
                # never read: the store's policy refuses it, so this is not one of our uploads
                raise SourceFailure(Code.FILE_TOO_LARGE, f"the file is larger than {MAX_UPLOAD_BYTES} bytes")
            data = services.blobs.get(key)
        except NotFound:
            return {"status": "ignored", "bot": bot, "sourceId": source_id}
        result = upload_file(services, bot, source_id, data)
    except NotFound:  # the source was deleted meanwhile
        services.blobs.delete(key)
        return {"status": "ignored", "bot": bot, "sourceId": source_id}
    except KnowledgeError as exc:
        services.blobs.delete(key)
        if services.state.get_source(bot, source_id) is not None:
            services.state.update_source(bot, source_id, status="failed", error_code=exc.code,
                                         error_message=exc.message[:500], updated_at=services.clock.now())
        log.warning("presigned upload of %s/%s refused: %s", bot, source_id, exc.code)
        return {"status": "refused", "bot": bot, "sourceId": source_id, "errorCode": exc.code}
    services.blobs.delete(key)
    return {"status": "queued" if result.queued else "stored", "bot": bot, "sourceId": source_id}
