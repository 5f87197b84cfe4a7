"""``kb serve`` and ``kb mcp``: the HTTP API and the read-only MCP tools over stdio."""

from __future__ import annotations

import argparse
import sys

from .common import open_services, require_embedders


def cmd_serve(args: argparse.Namespace) -> int:
    from ..server import EmbeddedServer

    services = open_services(args)
    require_embedders(services)
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
    from ..mcp_server import serve_stdio

    services = open_services(args)
    require_embedders(services)
    serve_stdio(services, args.token)
    return 0
