"""The functions' botocore session reads its data files as plain dicts
(``knowledge.adapters.aws.model_loader``): the same data, in the same order, as botocore's own
reader gives, for every file a function's clients load."""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from pathlib import Path

import pytest
from botocore.exceptions import DataNotFoundError
from botocore.loaders import Loader
from botocore.session import get_session

from knowledge.adapters.aws.model_loader import PlainJSONFileLoader, use_plain_json
from knowledge.wiring import build_aws_services
from tests.lambda_support import function_env

#: every client the composition root creates (``wiring.AWS_COMPONENTS`` and the secrets vault)
SERVICES = ("dynamodb", "s3", "stepfunctions", "bedrock-runtime", "bedrock-agent-runtime", "sqs", "secretsmanager")


def plain_loader() -> Loader:
    return Loader(file_loader=PlainJSONFileLoader())


@pytest.mark.parametrize("service", SERVICES)
def test_a_service_s_files_load_the_same_in_the_same_order(service: str) -> None:
    stock, plain = Loader(), plain_loader()
    for kind in ("service-2", "endpoint-rule-set-1", "paginators-1", "waiters-2"):
        try:
            expected = stock.load_service_model(service, kind)
        except DataNotFoundError:  # a service without this file: the plain loader must agree
            with pytest.raises(DataNotFoundError):
                plain.load_service_model(service, kind)
            continue
        got = plain.load_service_model(service, kind)
        assert json.dumps(got) == json.dumps(expected)  # same keys, values and order
        assert type(got) is dict and isinstance(expected, OrderedDict)


def test_the_session_files_load_the_same() -> None:
    stock, plain = Loader(), plain_loader()
    for name in ("endpoints", "sdk-default-configuration", "_retry", "partitions"):
        assert json.dumps(plain.load_data(name)) == json.dumps(stock.load_data(name))
    assert plain.file_loader.load_file(str(Path(Loader.BUILTIN_DATA_PATH) / "no-such-file")) is None
    assert not plain.file_loader.exists(str(Path(Loader.BUILTIN_DATA_PATH) / "no-such-file"))
    assert plain.file_loader.exists(str(Path(Loader.BUILTIN_DATA_PATH) / "endpoints"))


def test_the_session_keeps_its_search_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a model under AWS_DATA_PATH still wins over botocore's own, as it does for a plain session
    model = tmp_path / "dynamodb" / "2012-08-10"
    model.mkdir(parents=True)
    stock = Loader().load_service_model("dynamodb", "service-2")
    stock["metadata"]["serviceFullName"] = "Local DynamoDB"
    (model / "service-2.json").write_text(json.dumps(stock))
    monkeypatch.setenv("AWS_DATA_PATH", str(tmp_path))
    session = use_plain_json(get_session())
    client = session.create_client("dynamodb", region_name="us-east-1", aws_access_key_id="x",
                                   aws_secret_access_key="x")
    assert client.meta.service_model.metadata["serviceFullName"] == "Local DynamoDB"


def test_the_default_session_of_the_functions_reads_plain_dicts(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_DATA_PATH"):
        monkeypatch.delenv(name, raising=False)
    env = {**dict(os.environ), "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x",
           **function_env()}
    services = build_aws_services(env, embedder=False, eager=("dynamodb", "s3"))
    for client in (services.state.client, services.blobs.client):
        description = client.meta.service_model._service_description
        assert type(description) is dict and type(description["shapes"]) is dict
    # the models are botocore's own: a client built by a stock session has the same operations
    stock = get_session().create_client("s3", region_name="us-east-1", aws_access_key_id="x",
                                        aws_secret_access_key="x")
    assert services.blobs.client.meta.service_model.operation_names == stock.meta.service_model.operation_names
