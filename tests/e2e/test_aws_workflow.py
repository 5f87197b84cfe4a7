"""End to end on the AWS side, offline: the synthesised stack's own state machine runs inside
moto's Step Functions interpreter, its Lambda tasks invoked in-process on the real handler
functions, over moto DynamoDB/S3 and an in-process ``osmem-server`` for OpenSearch.

From a real S3 "Object Created" pack-drop event to an API Gateway ``retrieve`` event that
answers from the index; a malformed pack through the Catch path (MarkFailed); a reindex
(admin API or nightly schedule) that syncs the packs in the bucket with the bot's product
scope first; and an edit made while the source's refresh runs, indexed by a follow-up
execution that waits for the running one to let go of the lease."""

from __future__ import annotations

import importlib
import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest

from knowledge.api.auth import create_token
from knowledge.errors import Code
from knowledge.model import BotSettings
from knowledge.refresh.packsync import pack_source_id
from knowledge.settings import (
    ENV_STATE_MACHINE,
)
from tests.conftest import pack_bytes, page
from tests.lambda_support import FakeContext as LambdaContext
from tests.lambda_support import event, function_env

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore:No application metrics:UserWarning")]

REGION = "us-east-1"
ACCOUNT = "123456789012"
BOT = "acme"
BUCKET = "kb-e2e-bucket"
TABLE = "kb-e2e-table"
FUNCTIONS = ("ingest", "crawl", "retrieve", "admin_api", "authorizer", "scheduler")

PAGES = [
    page("help/withdraw/monero.md", "# Withdraw Monero\n\nA Monero withdrawal takes ten confirmations, "
         "about twenty minutes, before it reaches your wallet.", audience="CUSTOMER", title="Withdraw Monero"),
    page("help/deposit/bitcoin.md", "# Deposit Bitcoin\n\nBitcoin deposits credit after two confirmations.",
         audience="CUSTOMER", title="Deposit Bitcoin"),
    page("admin/hot-wallet.md", "# Hot wallet\n\nRebalance the Monero hot wallet before withdrawals pile up.",
         audience="OPERATOR", title="Hot wallet"),
]


class FakeContext(LambdaContext):
    """A workflow task's invocation: two minutes ahead of it."""

    remaining_ms = 120_000


# -- the state machine of the synthesised template ----------------------------------------------


@dataclass
class Template:
    definition: str  # ASL with the functions' ARNs filled in
    state_machine_name: str
    function_arns: dict[str, str]  # ARN -> function name


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Template:
    import aws_cdk as cdk
    from aws_cdk.assertions import Template as CdkTemplate

    from app import build_app
    from tests.infra.conftest import load_build_script

    assets = tmp_path_factory.mktemp("assets")
    load_build_script().build(assets, core_only=True, allow_missing_functions=True)
    app = cdk.App(context={"kb:assetsDir": str(assets), "kb:allowPlaceholderAssets": True},
                  outdir=str(tmp_path_factory.mktemp("cdk.out")))
    _, stack = build_app(app)
    resources = CdkTemplate.from_stack(stack).to_json()["Resources"]
    by_logical: dict[str, str] = {}
    for logical_id, resource in resources.items():
        if resource["Type"] == "AWS::Lambda::Function":
            for name, fn in stack.functions.functions.items():
                if stack.resolve(fn.node.default_child.logical_id) == logical_id:  # type: ignore[union-attr]
                    by_logical[logical_id] = name
    [machine] = [r for r in resources.values() if r["Type"] == "AWS::StepFunctions::StateMachine"]
    arns = {f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:kb-{name}": name for name in by_logical.values()}
    lookup = {logical: f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:kb-{name}" for logical, name in by_logical.items()}
    return Template(render(machine["Properties"]["DefinitionString"], lookup),
                    str(machine["Properties"]["StateMachineName"]), arns)


def render(value: Any, functions: dict[str, str]) -> str:
    """CloudFormation's ``Fn::Join``/``Fn::GetAtt``/``Ref`` in the definition, resolved for
    this fake account (the only references are the task functions and the partition)."""
    if isinstance(value, str):
        return value
    if "Fn::Join" in value:
        separator, parts = value["Fn::Join"]
        return str(separator).join(render(part, functions) for part in parts)
    if "Fn::GetAtt" in value:
        logical, attribute = value["Fn::GetAtt"]
        assert attribute == "Arn", value
        return functions[logical]
    if "Ref" in value:
        return {"AWS::Partition": "aws", "AWS::Region": REGION, "AWS::AccountId": ACCOUNT}[value["Ref"]]
    raise AssertionError(f"unexpected intrinsic in the definition: {value}")


# -- moto with the handlers behind the Lambda tasks ---------------------------------------------


@dataclass
class Cloud:
    services: Any
    sfn: Any
    s3: Any
    state_machine_arn: str
    handlers: dict[str, ModuleType]
    invocations: list[tuple[str, str | None]]
    #: (function, action, execution name, what the task returned or raised), in call order
    trace: list[tuple[str, str | None, str | None, Any]]
    #: called with the payload before the task (function, action) runs, in the execution's thread
    before: dict[tuple[str, str], Callable[[dict[str, Any]], None]]

    def wait(self, execution_arn: str, timeout: float = 40.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            described: dict[str, Any] = self.sfn.describe_execution(executionArn=execution_arn)
            if described["status"] != "RUNNING":
                return described
            time.sleep(0.05)
        raise AssertionError(f"execution {execution_arn} still running after {timeout}s")


@pytest.fixture
def cloud(monkeypatch: pytest.MonkeyPatch, osmem: Any, template: Template) -> Iterator[Cloud]:
    import boto3
    from moto import mock_aws
    from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils
    from opensearchpy import OpenSearch

    from knowledge.adapters.aws.dynamodb_table import create_table
    from knowledge.wiring import build_aws_services

    for name in ("AWS_PROFILE", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    prefix = f"kb{uuid.uuid4().hex[:10]}"
    env = {
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION, "AWS_REGION": REGION,
        **function_env(prefix, table=TABLE, bucket=BUCKET), "POWERTOOLS_TRACE_DISABLED": "true",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    invocations: list[tuple[str, str | None]] = []
    trace: list[tuple[str, str | None, str | None, Any]] = []
    before: dict[tuple[str, str], Callable[[dict[str, Any]], None]] = {}
    handlers: dict[str, ModuleType] = {}

    def invoke_in_process(parameters: dict[str, Any], region: str, state_credentials: Any) -> dict[str, Any]:
        """Stands in for ``lambda:Invoke``: the task's function, called like the Lambda
        runtime calls it (JSON in, JSON out; an exception becomes a FunctionError)."""
        name = template.function_arns[str(parameters["FunctionName"])]
        payload = json.loads(parameters.get("Payload") or b"{}")
        action = payload.get("action")
        invocations.append((name, action))
        hook = before.get((name, str(action)))
        if hook is not None:
            hook(payload)
        try:
            result = handlers[name].handler(payload, FakeContext())
        except Exception as exc:  # noqa: BLE001 - reported to the state machine as Lambda does
            trace.append((name, action, payload.get("executionName"), type(exc).__name__))
            error = {"errorMessage": str(exc), "errorType": type(exc).__name__, "stackTrace": []}
            return {"StatusCode": 200, "FunctionError": "Unhandled", "Payload": error}
        trace.append((name, action, payload.get("executionName"), result))
        return {"StatusCode": 200, "Payload": json.loads(json.dumps(result))}

    monkeypatch.setattr(lambda_eval_utils, "_invoke_lambda_function", invoke_in_process)
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        create_table(boto3.client("dynamodb", region_name=REGION), TABLE)
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET)
        sfn = boto3.client("stepfunctions", region_name=REGION)
        arn = sfn.create_state_machine(name=template.state_machine_name, definition=template.definition,
                                       roleArn=f"arn:aws:iam::{ACCOUNT}:role/kb-refresh")["stateMachineArn"]
        monkeypatch.setenv(ENV_STATE_MACHINE, arn)
        search = OpenSearch(hosts=[osmem.url], timeout=30)
        services = build_aws_services(search_client=search)
        for name in FUNCTIONS:
            module = importlib.import_module(f"functions.{name}.handler")
            monkeypatch.setattr(module, "SERVICES", services)
            handlers[name] = module
        yield Cloud(services, sfn, s3, arn, handlers, invocations, trace, before)
        search.indices.delete(index=f"{prefix}-*", ignore_unavailable=True, allow_no_indices=True)


def drop_pack(cloud: Cloud, slug: str, data: bytes) -> dict[str, Any]:
    """Put the object as an operator would and build the event EventBridge delivers."""
    key = f"packs/{slug}.ndjson.gz"
    cloud.s3.put_object(Bucket=BUCKET, Key=key, Body=data)
    head = cloud.s3.head_object(Bucket=BUCKET, Key=key)
    drop = event("s3_object_created.json")
    drop["resources"] = [f"arn:aws:s3:::{BUCKET}"]
    drop["detail"]["bucket"]["name"] = BUCKET
    drop["detail"]["object"].update(key=key, size=len(data), etag=head["ETag"].strip('"'))
    return drop


def retrieve_event(token: str, question: str, audience: str = "customer") -> dict[str, Any]:
    ev = event("apigw_rest_retrieve.json")
    ev["headers"]["Authorization"] = f"Bearer {token}"
    ev["multiValueHeaders"]["Authorization"] = [f"Bearer {token}"]
    ev["path"] = f"/api/bots/{BOT}/knowledge/retrieve"
    ev["body"] = json.dumps({"q": question, "audience": audience})
    return ev


def test_pack_drop_runs_the_workflow_and_retrieve_answers_from_the_index(cloud: Cloud) -> None:
    cloud.services.state.put_bot(BotSettings(bot=BOT))
    token = create_token(cloud.services, BOT, ["knowledge:read"])
    drop = drop_pack(cloud, "wallet", pack_bytes(PAGES))

    started = cloud.handlers["ingest"].handler(drop, FakeContext())
    [job] = started["started"]
    assert job["status"] == "started"
    finished = cloud.wait(job["executionArn"])
    assert finished["status"] == "SUCCEEDED", finished
    output = json.loads(finished["output"])
    assert output["result"]["status"] == "indexed" and output["result"]["documents"] == 3
    actions = [a for name, a in cloud.invocations if name == "ingest"]
    assert actions == ["take_lease", "list_documents", "process_batch", "commit"]

    source = cloud.services.state.get_source(BOT, pack_source_id(BOT, "wallet"))
    assert (source.status, source.lease_owner) == ("ready", None)
    assert source.passages >= 3

    reply = cloud.handlers["retrieve"].handler(retrieve_event(token, "How long does a Monero withdrawal take?"),
                                               FakeContext())
    assert reply["statusCode"] == 200
    body = json.loads(reply["body"])
    assert body["excerpts"][0]["path"] == "help/withdraw/monero.md"
    assert body["excerpts"][0]["sourceId"] == source.id
    assert "admin/hot-wallet.md" not in [e["path"] for e in body["excerpts"]]
    operator = json.loads(cloud.handlers["retrieve"].handler(
        retrieve_event(token, "rebalance hot wallet", "operator"), FakeContext())["body"])
    assert [e["path"] for e in operator["excerpts"]] == ["admin/hot-wallet.md"]

    # the same S3 event delivered twice starts no second execution
    again = cloud.handlers["ingest"].handler(drop, FakeContext())
    assert again["started"][0]["id"] == job["id"]
    assert len(cloud.sfn.list_executions(stateMachineArn=cloud.state_machine_arn)["executions"]) == 1


def test_a_malformed_pack_goes_through_the_catch_path(cloud: Cloud) -> None:
    cloud.services.state.put_bot(BotSettings(bot=BOT))
    drop = drop_pack(cloud, "broken", b"\x1f\x8b\x08 not really gzip")
    [job] = cloud.handlers["ingest"].handler(drop, FakeContext())["started"]
    finished = cloud.wait(job["executionArn"])
    assert finished["status"] == "FAILED"
    assert finished.get("error") == "RefreshError"
    actions = [a for name, a in cloud.invocations if name == "ingest"]
    assert actions == ["take_lease", "list_documents", "fail"]
    source = cloud.services.state.get_source(BOT, pack_source_id(BOT, "broken"))
    assert (source.status, source.error_code, source.lease_owner) == ("failed", Code.MALFORMED_FILE, None)
    assert cloud.services.state.orphan_generations() == []


# -- reindex: packs synced with the bot's product scope first -------------------------------------

FOREX_PAGES = [
    page("help/forex/leverage.md", "# Forex leverage\n\nForex accounts trade with leverage up to fifty to one "
         "on major currency pairs.", audience="CUSTOMER", title="Forex leverage"),
]


def api_event(token: str, method: str, path: str, body: Any = None) -> dict[str, Any]:
    ev = event("apigw_rest_retrieve.json")
    ev["headers"]["Authorization"] = f"Bearer {token}"
    ev["multiValueHeaders"]["Authorization"] = [f"Bearer {token}"]
    ev["httpMethod"] = method
    ev["path"] = path
    ev["body"] = json.dumps(body) if body is not None else None
    return ev


def call_api(cloud: Cloud, token: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    result = cloud.handlers["admin_api"].handler(api_event(token, method, path, body), FakeContext())
    return result["statusCode"], json.loads(result["body"]) if result["body"] else None


def ask(cloud: Cloud, token: str, question: str) -> list[dict[str, Any]]:
    reply = cloud.handlers["retrieve"].handler(retrieve_event(token, question), FakeContext())
    assert reply["statusCode"] == 200, reply
    return list(json.loads(reply["body"])["excerpts"])


def executions(cloud: Cloud) -> list[dict[str, Any]]:
    listed = cloud.sfn.list_executions(stateMachineArn=cloud.state_machine_arn)["executions"]
    return sorted(listed, key=lambda e: e["startDate"])


def settle(cloud: Cloud, timeout: float = 60.0) -> list[dict[str, Any]]:
    """Wait for every execution (ones started while waiting included) to finish."""
    done: dict[str, dict[str, Any]] = {}
    deadline = time.monotonic() + timeout
    while True:
        pending = [e for e in executions(cloud) if e["executionArn"] not in done]
        if not pending:
            return [done[e["executionArn"]] for e in executions(cloud)]
        assert time.monotonic() < deadline, f"executions still running after {timeout}s"
        for execution in pending:
            done[execution["executionArn"]] = cloud.wait(execution["executionArn"],
                                                         max(1.0, deadline - time.monotonic()))


@pytest.mark.parametrize("entry", ["admin_api", "scheduler"])
def test_reindex_syncs_the_packs_with_the_product_scope_then_refreshes(cloud: Cloud, entry: str) -> None:
    """A pack whose drop event never reached the bot (dropped before the bot existed, or the
    event was lost) gets its source on the next reindex, and a pack the bot's products no
    longer include is listed disabled/out_of_scope and withdrawn from search."""
    state = cloud.services.state
    state.put_bot(BotSettings(bot=BOT))  # no products declared yet: every pack is in scope
    token = create_token(cloud.services, BOT, ["knowledge:read", "knowledge:write"])
    [job] = cloud.handlers["ingest"].handler(drop_pack(cloud, "forex", pack_bytes(FOREX_PAGES)),
                                             FakeContext())["started"]
    assert cloud.wait(job["executionArn"])["status"] == "SUCCEEDED"
    forex_id, wallet_id = pack_source_id(BOT, "forex"), pack_source_id(BOT, "wallet")
    assert [e["path"] for e in ask(cloud, token, "forex leverage currency pairs")][:1] == ["help/forex/leverage.md"]

    # the wallet pack lands without an event, and the bot now declares the wallet product only
    cloud.s3.put_object(Bucket=BUCKET, Key="packs/wallet.ndjson.gz", Body=pack_bytes(PAGES))
    state.put_bot(BotSettings(bot=BOT, products=["wallet"]))
    assert state.get_source(BOT, wallet_id) is None

    if entry == "admin_api":
        status, body = call_api(cloud, token, "POST", f"/api/bots/{BOT}/knowledge/reindex", {})
        assert status == 202, body
        assert body["job"]["started"] == 1 and body["job"]["outOfScope"] == ["forex"]
    else:
        result = cloud.handlers["scheduler"].handler(event("scheduler_reindex_all.json"), FakeContext())
        assert result == {"bots": 1, "started": 1}
    finished = settle(cloud)
    assert [e["status"] for e in finished] == ["SUCCEEDED", "SUCCEEDED"]
    started = [json.loads(e["input"]) for e in finished[1:]]
    assert [(i["sourceId"], i["reason"]) for i in started] == [(wallet_id, "reindex")]

    wallet = state.get_source(BOT, wallet_id)
    assert (wallet.status, wallet.error_code, wallet.lease_owner) == ("ready", None, None)
    assert wallet.passages >= 3 and wallet.config == {"slug": "wallet"}
    forex = state.get_source(BOT, forex_id)
    assert (forex.status, forex.error_code, forex.live_generation, forex.passages) == \
        ("disabled", Code.OUT_OF_SCOPE, None, 0)
    assert [e["path"] for e in ask(cloud, token, "How long does a Monero withdrawal take?")][:1] == \
        ["help/withdraw/monero.md"]
    assert "help/forex/leverage.md" not in [e["path"] for e in ask(cloud, token, "forex leverage currency pairs")]
    assert cloud.services.state.orphan_generations() == []  # the forex passages are gone, not just hidden
    _, listed = call_api(cloud, token, "GET", f"/api/bots/{BOT}/knowledge/sources")
    rows = {row["id"]: row for row in listed["sources"]}
    assert (rows[forex_id]["status"], rows[forex_id]["errorCode"]) == ("disabled", Code.OUT_OF_SCOPE)


# -- an edit while the refresh runs ---------------------------------------------------------------


def article(day: str) -> dict[str, Any]:
    return {"title": "Withdrawal days", "state": "published",
            "body": f"# Withdrawal days\n\nWithdrawals are paid out every {day} by the finance desk."}


def test_an_edit_during_a_refresh_is_indexed_by_a_follow_up_once_the_running_one_stops(cloud: Cloud) -> None:
    state = cloud.services.state
    state.put_bot(BotSettings(bot=BOT))
    token = create_token(cloud.services, BOT, ["knowledge:read", "knowledge:write"])
    sources = f"/api/bots/{BOT}/knowledge/sources"
    question = "When are withdrawals paid out?"
    # every start lands in the same second, as a quick client's create-then-edit does: the
    # edits must still get executions of their own (not be taken for duplicate starts)
    cloud.services.workflow.clock = lambda: 1_800_000_000.25

    def answer() -> str:
        return " ".join(e["text"] for e in ask(cloud, token, question))

    status, created = call_api(cloud, token, "POST", sources,
                               {"type": "article", "name": "Withdrawal days", "visibility": "public",
                                "config": article("Monday")})
    assert status == 201, created
    source_id = created["id"]
    [first] = settle(cloud)
    assert first["status"] == "SUCCEEDED" and json.loads(first["output"])["result"]["status"] == "indexed"
    assert "Monday" in answer()
    live_before = state.get_source(BOT, source_id).live_generation

    seen: dict[str, Any] = {}

    def edit_while_building(payload: dict[str, Any]) -> None:
        if seen:
            return
        # the second refresh (Wednesday) is building its generation: the live one still answers
        seen["answerMeanwhile"] = answer()
        seen["sourceMeanwhile"] = state.get_source(BOT, source_id)
        seen["running"] = payload["executionName"]
        seen["patch"] = call_api(cloud, token, "PATCH", f"{sources}/{source_id}", {"config": article("Friday")})
        seen["sourceAfterEdit"] = state.get_source(BOT, source_id)
        # hold this batch until the follow-up execution has met the lease taken, so the test
        # covers the wait, not a follow-up that happens to start after the release
        deadline = time.monotonic() + 20
        while not any(fn == "ingest" and action == "take_lease" and name != seen["running"]
                      and isinstance(result, dict) and result.get("reason") == "busy"
                      for fn, action, name, result in list(cloud.trace)):
            assert time.monotonic() < deadline, "the follow-up execution never tried the lease"
            time.sleep(0.05)

    cloud.before[("ingest", "process_batch")] = edit_while_building
    status, patched = call_api(cloud, token, "PATCH", f"{sources}/{source_id}", {"config": article("Wednesday")})
    assert status == 200, patched
    finished = settle(cloud, timeout=90.0)

    # the edit came while the Wednesday run held the lease
    assert "Monday" in seen["answerMeanwhile"] and "Wednesday" not in seen["answerMeanwhile"]
    assert seen["sourceMeanwhile"].lease_owner == seen["running"]
    assert seen["patch"][0] == 200, seen["patch"]
    assert seen["sourceAfterEdit"].cancel_requested is True  # the running one is asked to stop
    assert [e["status"] for e in finished] == ["SUCCEEDED"] * 3
    by_name = {e["name"]: json.loads(e["output"]) for e in finished}
    assert by_name[seen["running"]]["result"] == {**by_name[seen["running"]]["result"],
                                                 "status": "failed", "errorCode": Code.CANCELLED}
    [follow_up] = [e["name"] for e in finished[2:]]
    assert by_name[follow_up]["result"]["status"] == "indexed"

    # the follow-up found the lease busy, waited, and took it only once the cancelled run let go
    ingest = [(action, name, result) for fn, action, name, result in cloud.trace if fn == "ingest"]
    follow_leases = [r for a, n, r in ingest if n == follow_up and a == "take_lease"]
    assert follow_leases[0] == {"acquired": False, "reason": "busy", "sourceType": "article"}
    assert follow_leases[-1]["acquired"] is True
    acquired_at = next(i for i, (a, n, r) in enumerate(ingest)
                       if n == follow_up and a == "take_lease" and r["acquired"])
    released_at = next(i for i, (a, n, _) in enumerate(ingest) if n == seen["running"] and a == "commit")
    assert released_at < acquired_at
    assert all(n != seen["running"] for _, n, _ in ingest[acquired_at:])  # never two at once

    source = state.get_source(BOT, source_id)
    assert (source.status, source.error_code, source.lease_owner, source.cancel_requested) == \
        ("ready", None, None, False)
    assert source.config == article("Friday") and source.live_generation != live_before
    final = answer()
    assert "Friday" in final and "Monday" not in final and "Wednesday" not in final
    assert state.orphan_generations() == []


# -- the corpus-learned rescue: off on the answer path, never learned by a tick -----------------


def rescue_corpus() -> list[dict[str, Any]]:
    """Enough varied customer pages for the rescue to switch on, a few that teach that
    "cashout" goes with "withdraw", one page that never says "cashout", and operator pages
    that say the same words."""
    words = [f"topic{n}" for n in range(160)]
    pages = []
    for i in range(60):
        chosen = [words[(i * 7 + j * 13) % len(words)] for j in range(14)]
        pages.append(page(f"help/misc/p{i}.md", "# Misc\n\n" + " ".join(chosen * 2), audience="CUSTOMER",
                          title=f"Misc {i}"))
    for i in range(8):
        pages.append(page(f"help/cash/c{i}.md", f"# Cash\n\ncashout withdraw payout withdraw cashout memo{i}",
                          audience="CUSTOMER", title=f"Cash {i}"))
    pages.append(page("help/target.md", "# Moving coins\n\nwithdraw payout withdraw subaddress payout",
                      audience="CUSTOMER", title="Moving coins"))
    pages.append(page("admin/ops.md", "# Ops\n\nwithdraw payout withdraw hotwallet payout", audience="OPERATOR",
                      title="Ops"))
    return pages


def tick(cloud: Cloud) -> dict[str, Any]:
    return dict(cloud.handlers["scheduler"].handler(event("scheduler_tick.json"), FakeContext()))


def rescued(excerpts: list[dict[str, Any]]) -> list[str]:
    return [e["path"] for e in excerpts if e["reason"] == "rescue"]


def test_ticks_learn_no_rescue_and_a_model_learned_over_opensearch_works_when_switched_on(cloud: Cloud) -> None:
    from knowledge.refresh import rescue_build
    from knowledge.retrieve.service import RetrievalOptions, RetrievalRequest, retrieve

    state = cloud.services.state
    state.put_bot(BotSettings(bot=BOT))
    token = create_token(cloud.services, BOT, ["knowledge:read"])
    [job] = cloud.handlers["ingest"].handler(drop_pack(cloud, "coins", pack_bytes(rescue_corpus())),
                                             FakeContext())["started"]
    assert cloud.wait(job["executionArn"])["status"] == "SUCCEEDED"
    before = ask(cloud, token, "cashout")
    assert before and rescued(before) == []  # words only

    assert "rescued" not in tick(cloud)  # the tick reaps and starts work, nothing more
    assert state.get_bot(BOT).rescue_version is None
    assert "Contents" not in cloud.s3.list_objects_v2(Bucket=BUCKET, Prefix="rescue/")

    # what a benchmark does: learn the model from the corpus in OpenSearch, then ask with it on
    rescue_build.rebuild(cloud.services, BOT)
    stored = cloud.s3.list_objects_v2(Bucket=BUCKET, Prefix="rescue/")["Contents"]
    assert [o["Key"] for o in stored] == [rescue_build.blob_key(BOT)]
    after = ask(cloud, token, "cashout")
    assert [e["fragmentId"] for e in after] == [e["fragmentId"] for e in before]  # the answer path: off
    res = retrieve(cloud.services, RetrievalRequest(BOT, "cashout"), record=False,
                   options=RetrievalOptions(rescue=True))
    assert rescued(res["excerpts"]) == ["help/target.md"]  # a page that never says "cashout"
    assert res["excerpts"][-1]["signals"]["rescueSimilarity"] >= 0.6
    assert "admin/ops.md" not in [e["path"] for e in res["excerpts"]]  # the customer never gets operator text
