"""The `papertalk` command line: one module per command, each with `register(sub, common)`.

Commands of other packages (the web UI's `serve`) come from the `papertalk.commands` entry
point group, so `rag` never imports `ui`. Every failure is one line on stderr and a non-zero
exit, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points

from rag.cli import answer, evaluate, ingest, search, similar, stats, topics
from rag.cli.common import common_parser
from rag.errors import PaperTalkError

COMMAND_GROUP = "papertalk.commands"


def build_parser() -> argparse.ArgumentParser:
    common = common_parser()
    parser = argparse.ArgumentParser(
        prog="papertalk",
        description="Citation-grounded question answering over scientific papers.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (ingest, search, stats, answer, topics, similar, evaluate):
        module.register(sub, common)
    for entry in sorted(entry_points(group=COMMAND_GROUP), key=lambda e: e.name):
        entry.load()(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    started = time.perf_counter()
    try:
        return handler(args)
    except PaperTalkError as exc:
        print(f"papertalk: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("papertalk: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # last resort: one line, never a traceback
        if "--debug" in sys.argv:
            raise
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        print(
            f"papertalk: internal error: {type(exc).__name__}: {first} "
            f"(after {time.perf_counter() - started:.1f} s; rerun with --debug for details)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
