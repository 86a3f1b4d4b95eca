"""``python -m tradingagents TICKER DATE [options]`` / ``python -m tradingagents settle`` (see --help)."""

import sys

from tradingagents.cli import main

if __name__ == "__main__":
    sys.exit(main())
