"""``kb``: the embedded mode's command line (DESIGN.md §5)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from ..errors import KnowledgeError
from ..settings import LocalSettings
from ..wiring import Services, build_local_services

DEFAULT_BOT = "default"


# -- helpers ----------------------------------------------------------------------------


def _services(args: argparse.Namespace) -> Services:
    settings = LocalSettings.from_env(args.data)
    port = getattr(args, "dev_allow_loopback", None)  # only ``kb serve`` has the switch
    if port is not None:
        print(f"kb: WARNING: DEVELOPMENT SWITCH ON: outbound calls (crawler, upstream, embedder) may reach "
              f"http(s)://127.0.0.1:{port} and http(s)://localhost:{port}. Never use this in production.",
              file=sys.stderr, flush=True)
        settings = replace(settings, dev_loopback_port=port)
    return build_local_services(settings)


def _dev_port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("PORT must be a number from 1 to 65535") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError("PORT must be a number from 1 to 65535")
    return port


def _print_json(obj: Any, out: TextIO | None = None) -> None:
    (out or sys.stdout).write(json.dumps(obj, ensure_ascii=False) + "\n")


class _Progress:
    """Progress on a terminal (one rewritten line); silent when stderr is not a TTY."""

    def __init__(self, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()

    def __call__(self, event: str, **data: Any) -> None:
        if not self.live:
            return
        if event == "document":
            self.stream.write(
                f"\r  {data['source']}: {data['number']}/{data['total']} pages, {data['passages']} passages\033[K"
            )
        elif event in ("committed", "skipped"):
            self.stream.write(f"\r  {data['source']}: {event}\033[K\n")
        self.stream.flush()


def _require_embedders(services: Services, bots: Sequence[str] | None = None) -> None:
    """Stop at start when an embedder that ``bots`` use (None: the default one and every
    known bot's) cannot load: one line saying which bot, what is missing and the fix."""
    from ..embed import EmbedderUnavailable, bot_embedder, check_embedder

    checked: set[str] = set()
    if bots is None:
        check_default = services.default_embedder
        try:
            check_embedder(check_default)
        except EmbedderUnavailable as exc:
            raise EmbedderUnavailable(f"KB_EMBEDDER={check_default}: {exc.message}") from exc
        checked.add(check_default)
        bots = services.state.list_bots()
    for bot in bots:
        settings = services.state.get_bot(bot)
        name, origin = bot_embedder(settings, services.default_embedder)
        options = dict(settings.embedder_options or {})
        key = f"{name}|{sorted(options.items())!r}" if origin == "bot" else name
        if key in checked:
            continue
        checked.add(key)
        try:
            check_embedder(name, options if origin == "bot" else None, policy=services.outbound)
        except EmbedderUnavailable as exc:
            via = f"the {name} embedder (its own setting)" if origin == "bot" else f"KB_EMBEDDER={name}"
            raise EmbedderUnavailable(f"bot {bot!r} uses {via}, but {exc.message}") from exc


def _learn_rescue(services: Services, bot: str) -> dict[str, Any] | None:
    """Relearn the bot's rescue model when its live corpus moved (after the passages are
    searchable); its stats and seconds, or None when it was current."""
    from ..refresh import rescue_build

    if not rescue_build.is_stale(services, bot):
        return None
    if sys.stderr.isatty():
        sys.stderr.write("  learning the rescue model from the corpus...\033[K\r")
        sys.stderr.flush()
    started = time.perf_counter()
    stats: dict[str, Any] = dict(rescue_build.rebuild(services, bot))
    stats["seconds"] = round(time.perf_counter() - started, 2)
    return stats


def _compact(services: Services, bot: str) -> list[dict[str, Any]]:
    """Rewrite the bot's search partitions that a refresh left in several segments (passages
    are already searchable: this only makes questions cheaper)."""
    if sys.stderr.isatty():
        sys.stderr.write("  compacting the search index...\033[K\r")
        sys.stderr.flush()
    try:
        return services.index.compact(bot)
    except KnowledgeError as exc:  # the passages are in and searchable: say so, and go on
        print(f"kb: search index compaction failed ({exc.code}); searches stay correct, only slower",
              file=sys.stderr)
        return []


def _print_compaction(done: list[dict[str, Any]]) -> None:
    for row in done:
        print(f"search index: {row['partition']} partition compacted, {row['segmentsBefore']} segments -> "
              f"{row['segmentsAfter']}, {row['passages']} passages, in {row['seconds']} s")


def _print_rescue(stats: dict[str, Any] | None) -> None:
    if stats is None:
        return
    state = f"{stats['dims']} dimensions over {stats['terms']} terms" if stats["dims"] else "off (corpus too small)"
    print(f"rescue model: {state}, learned from {stats['passages']} passages in {stats['seconds']} s")


# -- commands ---------------------------------------------------------------------------


def cmd_ingest(args: argparse.Namespace) -> int:
    from ..refresh.packsync import install_pack, pack_source_id
    from ..refresh.reindex import reindex
    from ..sources.packs import PACK_SUFFIX

    services = _services(args)
    _require_embedders(services, [args.bot])
    files: list[Path] = []
    for raw in args.paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(p for p in path.iterdir() if p.name.endswith(PACK_SUFFIX)))
        elif path.is_file():
            files.append(path)
        else:
            print(f"kb: no such file or folder: {raw}", file=sys.stderr)
            return 2
    slugs = []
    for path in files:
        try:
            slugs.append(install_pack(services, path))
        except KnowledgeError as exc:
            print(f"kb: {path}: {exc.code}: {exc.message}", file=sys.stderr)
            return 2
    only = {pack_source_id(args.bot, s) for s in slugs}
    report = reindex(services, args.bot, force=args.force, only=only, progress=_Progress())
    summary = report.as_dict()
    summary["compaction"] = _compact(services, args.bot)
    summary["rescue"] = _learn_rescue(services, args.bot)
    # a source left queued (throttled, embedder failing) is not in: the ingest did not finish
    queued = [row for row in summary["results"] if row["status"] == "queued"]
    if args.json:
        _print_json(summary)
    else:
        print(
            f"ingested {len(slugs)} pack(s): {summary['pages']} pages, {summary['passages']} passages, "
            f"{summary['skipped']} unchanged, {summary['pagesSkipped']} pages skipped, "
            f"{summary['failed']} failed, {summary['pagesFailed']} pages failed"
            + (f", {len(queued)} queued for retry" if queued else "")
        )
        for slug in summary["outOfScope"]:
            print(f"  out of scope (not indexed): {slug}")
        for row in summary["results"]:
            if row["status"] in ("failed", "queued"):
                print(f"  {row['status']}: {row['name']}: {row['errorCode']}")
        _print_compaction(summary["compaction"])
        _print_rescue(summary["rescue"])
    return 1 if report.failed or queued else 0


def cmd_reindex(args: argparse.Namespace) -> int:
    from ..refresh.reindex import reindex

    services = _services(args)
    _require_embedders(services, [args.bot])
    report = reindex(services, args.bot, force=args.force, progress=_Progress())
    summary = report.as_dict()
    summary["compaction"] = _compact(services, args.bot)
    summary["rescue"] = _learn_rescue(services, args.bot)
    if args.json:
        _print_json(summary)
    else:
        print(
            f"reindexed {summary['sources']} source(s): {summary['indexed']} rebuilt, {summary['skipped']} unchanged, "
            f"{summary['failed']} failed; {summary['passages']} passages written"
        )
        if summary["warning"]:
            print(f"  warning: {summary['warning']}")
        _print_compaction(summary["compaction"])
        _print_rescue(summary["rescue"])
    return 1 if report.failed else 0


def cmd_search(args: argparse.Namespace) -> int:
    from ..retrieve.service import RetrievalRequest, retrieve

    services = _services(args)
    if args.queries:
        return _search_batch(services, args)
    if not args.question:
        print("kb search: give a QUESTION or --queries FILE", file=sys.stderr)
        return 2
    question = " ".join(args.question)
    try:
        result = retrieve(services, RetrievalRequest(args.bot, question, args.audience, args.agent))
    except KnowledgeError as exc:
        _print_json({"error": {"code": exc.code, "message": exc.message}}, sys.stderr)
        return 2
    if args.json:
        _print_json(result)
        return 0
    print(
        f"confidence {result['confidence']:.2f} (floor {result['floor']:.2f}), "
        f"wouldAnswer={str(result['wouldAnswer']).lower()}, corpus {result['corpusSize']} passages"
    )
    gate = result.get("gate")
    if gate:  # a fee, limit or timing question: say whether operator content settles it
        print(f"topic gate {'passed' if gate['passed'] else 'closed'}: {gate['reason']}")
    for e in result["excerpts"]:
        preview = " ".join(e["text"].split())[:160]
        print(f"{e['rank']:>2}. [{e['score']:.3f}] {e['breadcrumb']}  ({e['path']})\n    {preview}")
    if not result["excerpts"]:
        print("nothing found")
    return 0


def _search_batch(services: Services, args: argparse.Namespace) -> int:
    from ..retrieve.service import RetrievalRequest, retrieve

    stream = sys.stdin if args.queries == "-" else open(args.queries, encoding="utf-8")  # noqa: SIM115
    status = 0
    with stream:
        for number, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                if not isinstance(item, dict):
                    raise ValueError("not an object")
            except ValueError:
                error = {"code": "invalid_input", "message": "bad JSON line"}
                _print_json({"id": None, "line": number, "error": error})
                status = 1
                continue
            try:
                req = RetrievalRequest(args.bot, str(item.get("query", "")), item.get("audience") or args.audience,
                                       item.get("agentId") or args.agent)
                result = retrieve(services, req)
                _print_json({"id": item.get("id"), **result})
            except KnowledgeError as exc:
                _print_json({"id": item.get("id"), "error": {"code": exc.code, "message": exc.message}})
                status = 1
    return status


def cmd_sources(args: argparse.Namespace) -> int:
    from ..api.views import heaviest_first, iso
    from ..embed import bot_embedder

    services = _services(args)
    embedder, origin = bot_embedder(services.state.get_bot(args.bot), services.default_embedder)
    sources = heaviest_first(services.state.list_sources(args.bot))
    rows = [
        {
            "id": s.id,
            "type": s.type,
            "name": s.name,
            "status": s.status,
            "errorCode": s.error_code,
            "passages": s.passages,
            "documentsUnchanged": s.documents_unchanged,
            "weight": s.weight,
            "lastIndexedAt": iso(s.last_indexed_at),
            "embedder": embedder,
        }
        for s in sources
    ]
    if args.json:
        _print_json(rows)
        return 0
    via = "the bot's setting" if origin == "bot" else "KB_EMBEDDER"
    print(f"bot {args.bot}: embedder {embedder} ({via})")
    if not rows:
        print("no sources")
    for r in rows:
        weight = f" x{r['weight']}" if r["weight"] != 1.0 else ""
        err = f" [{r['errorCode']}]" if r["errorCode"] else ""
        same = f", {r['documentsUnchanged']} pages unchanged" if r["documentsUnchanged"] else ""
        print(f"{r['status']:<9} {r['passages']:>6} passages{weight}  {r['name']} ({r['type']}, {r['id']}{same}){err}")
    return 0


def cmd_gaps(args: argparse.Namespace) -> int:
    """What was asked that nothing answered, clustered: the body of ``GET gaps``."""
    from ..api.routes import gap_list, parse_since

    body = gap_list(_services(args), args.bot, args.audience, parse_since(args.since))
    if args.json:
        _print_json(body)
        return 0
    if not body["clusters"]:
        print(f"bot {args.bot}: no gaps")
    for c in body["clusters"]:
        outcomes = ", ".join(f"{k} {v}" for k, v in c["outcomes"].items())
        topic = f" [{c['topic']}]" if c["topic"] else ""
        print(f"{c['count']:>5}x  {c['representative']}{topic}  ({outcomes}; last {c['lastSeen']})")
        for example in c["examples"]:
            if example != c["representative"]:
                print(f"         - {example}")
    return 0


def cmd_chunk(args: argparse.Namespace) -> int:
    from ..chunking import chunk_markdown
    from ..sources.frontmatter import split_frontmatter

    path = Path(args.file)
    text = path.read_text(encoding="utf-8", errors="replace")
    meta, body = split_frontmatter(text)
    title = meta.get("title") or path.stem
    chunks = chunk_markdown(body, [title])
    if args.json:
        _print_json([{"breadcrumb": c.breadcrumb, "text": c.text, "tokens": c.tokens} for c in chunks])
    else:
        for n, c in enumerate(chunks, start=1):
            print(f"--- passage {n}: {c.tokens} tokens — {c.breadcrumb}")
            print(c.text)
    return 0


def cmd_extract(args: argparse.Namespace) -> int:
    from ..extract import extract_result_json

    result = extract_result_json(args.file)
    if args.json:
        _print_json(result)
    elif result["error"]:
        print(f"error: {result['error']['code']}", file=sys.stderr)
    else:
        print(result["text"])
    return 1 if result["error"] else 0


def cmd_eval(args: argparse.Namespace) -> int:
    from ..evaluation import run_suite
    from ..retrieve.service import RetrievalRequest, retrieve

    services = _services(args)

    def ask(query: str, audience: str) -> dict[str, Any]:
        return retrieve(services, RetrievalRequest(args.bot, query, audience), record=False)

    with open(args.suite, encoding="utf-8") as fh:
        report = run_suite(fh, ask, k=args.k)
    figures = report.as_dict()
    failures = []
    for name, threshold in ((f"recall@{args.k}", args.min_recall), ("ndcg@10", args.min_ndcg),
                            ("mrr", args.min_mrr)):
        if threshold is not None and figures[name] < threshold:
            failures.append(f"{name} {figures[name]:.4f} < {threshold}")
    if args.json:
        _print_json({**figures, "failed": failures})
    else:
        print(f"{figures['cases']} cases: recall@{args.k} {figures[f'recall@{args.k}']:.4f}, "
              f"nDCG@10 {figures['ndcg@10']:.4f}, MRR {figures['mrr']:.4f}")
        if "answeredWhenAnswerable" in figures:
            print(f"answered {figures['answeredWhenAnswerable']:.1%} of {figures['answerable']} answerable")
        if "refusedWhenUnanswerable" in figures:
            print(f"refused {figures['refusedWhenUnanswerable']:.1%} of {figures['unanswerable']} unanswerable")
        if "confidenceAuc" in figures:
            print(f"confidence AUC {figures['confidenceAuc']:.4f}")
        for case in report.cases:
            if args.verbose_cases and case.answerable and case.recall < 1.0:
                print(f"  missed: {case.query}")
            if args.verbose_cases and case.would_answer is not None and case.would_answer != case.answerable:
                verdict = "answered" if case.would_answer else "refused"
                print(f"  {verdict} ({case.confidence:.2f}): {case.query}")
        for line in failures:
            print(f"below threshold: {line}", file=sys.stderr)
    return 1 if failures else 0


def cmd_token(args: argparse.Namespace) -> int:
    from ..api.auth import create_token

    services = _services(args)
    scopes = [s.strip() for s in args.scopes.split(",") if s.strip()]
    try:
        token = create_token(services, args.bot, scopes, expires_in=args.expires_in)
    except KnowledgeError as exc:
        print(f"kb token: {exc.message}", file=sys.stderr)
        return 2
    print(f"token for bot {args.bot} with scopes {','.join(scopes)}:")
    print(token)
    return 0


def cmd_token_list(args: argparse.Namespace) -> int:
    from ..api.views import token_json

    _print_json([token_json(t) for t in _services(args).state.list_tokens(args.bot)])
    return 0


def cmd_token_revoke(args: argparse.Namespace) -> int:
    if not _services(args).state.delete_token(args.bot, args.id):
        print(f"kb token: bot {args.bot} has no token {args.id}", file=sys.stderr)
        return 1
    print(f"revoked {args.id}")
    return 0


def cmd_aws_bootstrap(args: argparse.Namespace) -> int:
    """The first admin token of a deployed stack: written (hashed) into the stack's table."""
    import boto3

    from ..adapters.aws.dynamodb_state import DynamoDbStateStore
    from ..api.auth import SCOPE_ADMIN, SCOPE_READ, SCOPE_WRITE, new_token

    stacks = boto3.client("cloudformation", region_name=args.region).describe_stacks(StackName=args.stack)
    outputs = {o["OutputKey"]: o["OutputValue"] for o in stacks["Stacks"][0].get("Outputs", [])}
    if "TableName" not in outputs:
        print(f"kb aws bootstrap: stack {args.stack} has no TableName output", file=sys.stderr)
        return 2
    store = DynamoDbStateStore(outputs["TableName"], client=boto3.client("dynamodb", region_name=args.region))
    scopes = [SCOPE_READ, SCOPE_WRITE, SCOPE_ADMIN] if args.all_scopes else [SCOPE_ADMIN]
    try:
        secret, token = new_token(args.bot, scopes, time.time(), expires_in=args.expires_in)
    except KnowledgeError as exc:
        print(f"kb aws bootstrap: {exc.message}", file=sys.stderr)
        return 2
    store.put_token(token)
    print(f"admin token {token.id} for bot {args.bot} with scopes {','.join(scopes)} "
          f"(API {outputs.get('ApiUrl', '?')}):")
    print(secret)
    return 0


def cmd_bot(args: argparse.Namespace) -> int:
    from ..sources.scope import validate_product

    services = _services(args)
    settings = services.state.get_bot(args.bot)
    changed = False
    if args.products is not None:
        try:
            settings.products = [validate_product(p) for p in args.products.split(",") if p.strip()]
        except ValueError as exc:
            print(f"kb bot: {exc}", file=sys.stderr)
            return 2
        changed = True
    if args.scoping is not None:
        settings.scope_to_products = args.scoping == "on"
        changed = True
    if args.floor is not None:
        settings.floor = args.floor
        changed = True
    if changed:
        services.state.put_bot(settings)
    _print_json({"bot": settings.bot, "products": settings.products, "scopeToProducts": settings.scope_to_products,
                 "floor": settings.floor, "embedder": settings.embedder})
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from .server import EmbeddedServer

    services = _services(args)
    _require_embedders(services)
    try:
        server = EmbeddedServer(services, args.host, args.port, read_timeout=args.read_timeout,
                                threads=args.threads)
    except OSError as exc:  # the port is taken, or the address is not this machine's
        reason = exc.strerror or str(exc)
        print(f"kb serve: cannot listen on {args.host}:{args.port}: {reason.lower()}", file=sys.stderr)
        return 1
    print(f"kb serving {services.data_dir} on http://{args.host}:{server.port}", file=sys.stderr, flush=True)
    server.serve_forever()  # until SIGTERM or SIGINT: in-flight requests finish, records are written
    print("kb serve: stopped", file=sys.stderr, flush=True)
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    from .mcp_server import serve_stdio

    services = _services(args)
    _require_embedders(services)
    serve_stdio(services, args.token)
    return 0


# -- parser -----------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kb", description="Knowledge index and retrieval for AI support agents")
    p.add_argument("--data", help="data directory (default $KB_DATA or ./.kb)")
    p.add_argument("-v", "--verbose", action="store_true", help="log to stderr")
    sub = p.add_subparsers(dest="command", required=True)

    def bot_opt(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--bot", default=DEFAULT_BOT, help="bot (tenant) id; default 'default'")

    sp = sub.add_parser("serve", help="serve the HTTP API")
    sp.add_argument("--dev-allow-loopback", type=_dev_port, metavar="PORT", default=None,
                    help="development only: let the crawler, upstream and embedder reach 127.0.0.1/localhost "
                         "on this one port, over http too (off by default)")
    sp.add_argument("--host", default="127.0.0.1")
    sp.add_argument("--port", type=int, default=8080)
    sp.add_argument("--read-timeout", type=float, default=30.0,
                    help="seconds a request may take to arrive once started (default 30)")
    sp.add_argument("--threads", type=int, default=8, help="requests handled at once (default 8)")
    sp.set_defaults(func=cmd_serve)

    sp = sub.add_parser("mcp", help="serve the read-only MCP tools over stdio (token from $KB_TOKEN)")
    sp.add_argument("--token", default=None, help="API token (default $KB_TOKEN; a tool's token argument wins)")
    sp.set_defaults(func=cmd_mcp)

    sp = sub.add_parser("ingest", help="index documentation packs (files or folders)")
    sp.add_argument("paths", nargs="+")
    sp.add_argument("--force", action="store_true", help="rebuild even when unchanged")
    sp.add_argument("--json", action="store_true")
    bot_opt(sp)
    sp.set_defaults(func=cmd_ingest)

    sp = sub.add_parser("search", help="ask a question")
    sp.add_argument("question", nargs="*")
    sp.add_argument("--audience", default="customer", choices=["customer", "public", "operator"])
    sp.add_argument("--agent", default=None)
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--queries", help="JSON lines {id, query, audience}; one response per line")
    bot_opt(sp)
    sp.set_defaults(func=cmd_search)

    sp = sub.add_parser("sources", help="list sources, heaviest first")
    sp.add_argument("--json", action="store_true")
    bot_opt(sp)
    sp.set_defaults(func=cmd_sources)

    sp = sub.add_parser("gaps", help="what was asked that nothing answered, clustered, most frequent first")
    sp.add_argument("--audience", default=None, choices=["customer", "public", "operator"])
    sp.add_argument("--since", default=None, help="Unix seconds or an ISO 8601 time")
    sp.add_argument("--json", action="store_true")
    bot_opt(sp)
    sp.set_defaults(func=cmd_gaps)

    sp = sub.add_parser("reindex", help="sync packs and refresh every source")
    sp.add_argument("--force", action="store_true")
    sp.add_argument("--json", action="store_true")
    bot_opt(sp)
    sp.set_defaults(func=cmd_reindex)

    sp = sub.add_parser("chunk", help="show the passages a Markdown file becomes")
    sp.add_argument("file")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(func=cmd_chunk)

    sp = sub.add_parser("extract", help="show the text a file becomes, or its error code")
    sp.add_argument("file")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(func=cmd_extract)

    sp = sub.add_parser("eval", help="run a saved retrieval regression suite (JSON lines)")
    sp.add_argument("suite")
    sp.add_argument("--k", type=int, default=10, help="recall cut-off (default 10)")
    sp.add_argument("--min-recall", type=float, help="exit 1 when recall@k is below this")
    sp.add_argument("--min-ndcg", type=float, help="exit 1 when nDCG@10 is below this")
    sp.add_argument("--min-mrr", type=float, help="exit 1 when MRR is below this")
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--verbose-cases", action="store_true", help="list the questions that missed")
    bot_opt(sp)
    sp.set_defaults(func=cmd_eval)

    sp = sub.add_parser("token", help="API tokens")
    tsub = sp.add_subparsers(dest="token_command", required=True)
    tp = tsub.add_parser("create", help="create a token for one bot")
    tp.add_argument("--bot", required=True)
    tp.add_argument("--scopes", default="knowledge:read",
                    help="comma-separated: knowledge:read, knowledge:write, knowledge:admin")
    tp.add_argument("--expires-in", type=int, default=None, metavar="SECONDS", help="the token stops working then")
    tp.set_defaults(func=cmd_token)
    tp = tsub.add_parser("list", help="a bot's tokens (id, scopes, created, last used, expiry; never secrets)")
    tp.add_argument("--bot", required=True)
    tp.set_defaults(func=cmd_token_list)
    tp = tsub.add_parser("revoke", help="revoke a token by its id (from `token list`)")
    tp.add_argument("--bot", required=True)
    tp.add_argument("id")
    tp.set_defaults(func=cmd_token_revoke)

    sp = sub.add_parser("aws", help="operations on a deployed AWS stack")
    asub = sp.add_subparsers(dest="aws_command", required=True)
    ap = asub.add_parser("bootstrap", help="create the first admin token of a deployed stack (printed once)")
    ap.add_argument("--stack", required=True, help="the CloudFormation stack name")
    ap.add_argument("--bot", default="default")
    ap.add_argument("--region", default=None)
    ap.add_argument("--expires-in", type=int, default=None, metavar="SECONDS")
    ap.add_argument("--all-scopes", action="store_true", help="read and write too, not only admin")
    ap.set_defaults(func=cmd_aws_bootstrap)

    sp = sub.add_parser("bot", help="show or change a bot's settings (products, scoping, floor)")
    sp.add_argument("--products", help="comma-separated products the bot runs (kind:name or name)")
    sp.add_argument("--scoping", choices=["on", "off"])
    sp.add_argument("--floor", type=float)
    bot_opt(sp)
    sp.set_defaults(func=cmd_bot)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        status = int(args.func(args))
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
        return status
    except KnowledgeError as exc:
        print(f"kb: {exc.code}: {exc.message}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"kb: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader went away (`kb sources | head`): stop quietly; the interpreter's final
        # flush of stdout would fail again, so stdout now points at /dev/null
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
