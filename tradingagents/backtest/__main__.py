"""``python -m tradingagents.backtest TICKERS --start … --end …`` (the same as ``python -m tradingagents backtest``)."""

import sys

from tradingagents.backtest.cli import main

if __name__ == "__main__":
    sys.exit(main())
