"""``kb token``, ``kb bot``, ``kb sources`` and ``kb aws bootstrap``: API tokens, a bot's
settings, its sources, and the first admin token of a deployed stack."""

from __future__ import annotations

import argparse
import sys
import time

from ...errors import KnowledgeError
from .common import open_services, print_json


def cmd_token(args: argparse.Namespace) -> int:
    from ...api.auth import create_token

    services = open_services(args)
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
    from ...api.views import token_json

    print_json([token_json(t) for t in open_services(args).state.list_tokens(args.bot)])
    return 0


def cmd_token_revoke(args: argparse.Namespace) -> int:
    if not open_services(args).state.delete_token(args.bot, args.id):
        print(f"kb token: bot {args.bot} has no token {args.id}", file=sys.stderr)
        return 1
    print(f"revoked {args.id}")
    return 0


def cmd_bot(args: argparse.Namespace) -> int:
    from ...sources.scope import validate_product

    services = open_services(args)
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
    print_json({"bot": settings.bot, "products": settings.products, "scopeToProducts": settings.scope_to_products,
                 "floor": settings.floor, "embedder": settings.embedder})
    return 0


def cmd_sources(args: argparse.Namespace) -> int:
    from ...api.views import heaviest_first, iso
    from ...embed import bot_embedder

    services = open_services(args)
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
        print_json(rows)
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


def cmd_aws_bootstrap(args: argparse.Namespace) -> int:
    """The first admin token of a deployed stack: written (hashed) into the stack's table."""
    import boto3

    from ...adapters.aws.dynamodb_state import DynamoDbStateStore
    from ...api.auth import SCOPE_ADMIN, SCOPE_READ, SCOPE_WRITE, new_token

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
