"""``python -m tradingagents TICKER DATE [options]`` / ``python -m tradingagents settle`` (see --help);
``python -m tradingagents mcp`` serves the same commands as MCP tools (``mcp_server.py``)."""

import sys

from tradingagents.cli import main


def _main() -> int:
    if sys.argv[1:2] == ["mcp"]:
        from tradingagents.mcp_server import main as mcp_main

        return mcp_main(sys.argv[2:])
    return main()


if __name__ == "__main__":
    sys.exit(_main())
