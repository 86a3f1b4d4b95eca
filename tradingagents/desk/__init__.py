"""The morning desk: the book's commands, schedules, the scheduler that runs them, digests and alerts.

Above ``storage/`` (where the book, the schedules and the scheduler's state live), ``batch.py`` (which
the scheduler calls) and ``graph/`` (whose runs read the book and size orders, ``graph/book_view.py``);
the order sizing itself is the pure ``tradingagents/book.py``. ``schedules.py`` (jobs), ``scheduler.py``
(the loop over due jobs), ``digest.py`` (the renderer), ``senders.py`` (SMTP and webhook), ``cli.py``
(``book``, ``schedule``, ``scheduler``).
"""
