"""``kb``: the embedded mode's command line (DESIGN.md §5): the parser of every command and
``main``, which runs one and turns errors into exit codes. The commands themselves live in
:mod:`knowledge.embedded.commands`, one module per kind of work; each imports its heavy
dependencies (retrieval, refresh, extraction, the server) only when it runs."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from ..errors import KnowledgeError
from .commands import admin, indexing, inspection, query, serving

DEFAULT_BOT = "default"


def _dev_port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("PORT must be a number from 1 to 65535") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError("PORT must be a number from 1 to 65535")
    return port


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
    sp.set_defaults(func=serving.cmd_serve)

    sp = sub.add_parser("mcp", help="serve the read-only MCP tools over stdio (token from $KB_TOKEN)")
    sp.add_argument("--token", default=None, help="API token (default $KB_TOKEN; a tool's token argument wins)")
    sp.set_defaults(func=serving.cmd_mcp)

    sp = sub.add_parser("ingest", help="index documentation packs (files or folders)")
    sp.add_argument("paths", nargs="+")
    sp.add_argument("--force", action="store_true", help="rebuild even when unchanged")
    sp.add_argument("--json", action="store_true")
    bot_opt(sp)
    sp.set_defaults(func=indexing.cmd_ingest)

    sp = sub.add_parser("search", help="ask a question")
    sp.add_argument("question", nargs="*")
    sp.add_argument("--audience", default="customer", choices=["customer", "public", "operator"])
    sp.add_argument("--agent", default=None)
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--queries", help="JSON lines {id, query, audience}; one response per line")
    bot_opt(sp)
    sp.set_defaults(func=query.cmd_search)

    sp = sub.add_parser("sources", help="list sources, heaviest first")
    sp.add_argument("--json", action="store_true")
    bot_opt(sp)
    sp.set_defaults(func=admin.cmd_sources)

    sp = sub.add_parser("gaps", help="what was asked that nothing answered, clustered, most frequent first")
    sp.add_argument("--audience", default=None, choices=["customer", "public", "operator"])
    sp.add_argument("--since", default=None, help="Unix seconds or an ISO 8601 time")
    sp.add_argument("--json", action="store_true")
    bot_opt(sp)
    sp.set_defaults(func=query.cmd_gaps)

    sp = sub.add_parser("reindex", help="sync packs and refresh every source")
    sp.add_argument("--force", action="store_true")
    sp.add_argument("--json", action="store_true")
    bot_opt(sp)
    sp.set_defaults(func=indexing.cmd_reindex)

    sp = sub.add_parser("chunk", help="show the passages a Markdown file becomes")
    sp.add_argument("file")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(func=inspection.cmd_chunk)

    sp = sub.add_parser("extract", help="show the text a file becomes, or its error code")
    sp.add_argument("file")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(func=inspection.cmd_extract)

    sp = sub.add_parser("eval", help="run a saved retrieval regression suite (JSON lines)")
    sp.add_argument("suite")
    sp.add_argument("--k", type=int, default=10, help="recall cut-off (default 10)")
    sp.add_argument("--min-recall", type=float, help="exit 1 when recall@k is below this")
    sp.add_argument("--min-ndcg", type=float, help="exit 1 when nDCG@10 is below this")
    sp.add_argument("--min-mrr", type=float, help="exit 1 when MRR is below this")
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--verbose-cases", action="store_true", help="list the questions that missed")
    bot_opt(sp)
    sp.set_defaults(func=query.cmd_eval)

    sp = sub.add_parser("token", help="API tokens")
    tsub = sp.add_subparsers(dest="token_command", required=True)
    tp = tsub.add_parser("create", help="create a token for one bot")
    tp.add_argument("--bot", required=True)
    tp.add_argument("--scopes", default="knowledge:read",
                    help="comma-separated: knowledge:read, knowledge:write, knowledge:admin")
    tp.add_argument("--expires-in", type=int, default=None, metavar="SECONDS", help="the token stops working then")
    tp.set_defaults(func=admin.cmd_token)
    tp = tsub.add_parser("list", help="a bot's tokens (id, scopes, created, last used, expiry; never secrets)")
    tp.add_argument("--bot", required=True)
    tp.set_defaults(func=admin.cmd_token_list)
    tp = tsub.add_parser("revoke", help="revoke a token by its id (from `token list`)")
    tp.add_argument("--bot", required=True)
    tp.add_argument("id")
    tp.set_defaults(func=admin.cmd_token_revoke)

    sp = sub.add_parser("aws", help="operations on a deployed AWS stack")
    asub = sp.add_subparsers(dest="aws_command", required=True)
    ap = asub.add_parser("bootstrap", help="create the first admin token of a deployed stack (printed once)")
    ap.add_argument("--stack", required=True, help="the CloudFormation stack name")
    ap.add_argument("--bot", default="default")
    ap.add_argument("--region", default=None)
    ap.add_argument("--expires-in", type=int, default=None, metavar="SECONDS")
    ap.add_argument("--all-scopes", action="store_true", help="read and write too, not only admin")
    ap.set_defaults(func=admin.cmd_aws_bootstrap)

    sp = sub.add_parser("bot", help="show or change a bot's settings (products, scoping, floor)")
    sp.add_argument("--products", help="comma-separated products the bot runs (kind:name or name)")
    sp.add_argument("--scoping", choices=["on", "off"])
    sp.add_argument("--floor", type=float)
    bot_opt(sp)
    sp.set_defaults(func=admin.cmd_bot)
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
