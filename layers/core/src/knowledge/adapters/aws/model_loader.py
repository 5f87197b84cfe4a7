"""botocore's data files (service models, endpoint rules, ``endpoints.json``) read as plain dicts.

Every cold start parses several of them: ``endpoints.json`` for the session, then for each
client its service model and endpoint rule set (S3's are about 2.3 MB of JSON). botocore's
reader parses them with ``object_pairs_hook=OrderedDict``, one Python call per JSON object,
which is about half of the parsing. A ``dict`` keeps the file's order as well, so a session
given :func:`use_plain_json` loads the same data (``tests/contract/test_model_loader.py``
compares them for every service the functions create) for less: see ``bench/RESULTS.md``.

The session's own loader is kept (its search paths, ``AWS_DATA_PATH``, its cache, the SDK
extras it merges); only the object that reads a file is replaced, through botocore's public
``Loader.file_loader`` attribute and ``Session.register_component``.
"""

from __future__ import annotations

import gzip
import json
import os
from typing import Any

from botocore.loaders import JSONFileLoader, create_loader

#: the file forms botocore looks for, in its order
_FORMS = ((".json", open), (".json.gz", gzip.open))


class PlainJSONFileLoader(JSONFileLoader):
    """botocore's ``JSONFileLoader`` with its two public methods (``exists``, ``load_file``)
    giving dicts."""

    def exists(self, file_path: str) -> bool:
        return any(os.path.isfile(file_path + suffix) for suffix, _ in _FORMS)

    def load_file(self, file_path: str) -> Any:
        """The data of ``file_path`` + ``.json`` (or ``.json.gz``), or None when neither exists."""
        for suffix, opener in _FORMS:
            path = file_path + suffix
            if os.path.isfile(path):
                with opener(path, "rb") as fp:
                    return json.loads(fp.read().decode("utf-8"))
        return None


def use_plain_json(session: Any) -> Any:
    """``session`` (botocore's) reading its data files with :class:`PlainJSONFileLoader`;
    call before it creates a client. Returns the session."""
    loader = create_loader(session.get_config_variable("data_path"))
    loader.file_loader = PlainJSONFileLoader()
    session.register_component("data_loader", loader)
    return session
