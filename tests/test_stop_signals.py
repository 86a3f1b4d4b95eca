"""The Ctrl-C / SIGTERM handler shared by the command line (run, batch, backtest, scheduler)."""

import signal
import threading

import pytest

from tradingagents.stop_signals import install_stop_handlers, stop_handler

HANG_S = 60  # only catches a hang


def test_a_signal_that_comes_while_the_stop_event_is_locked_does_not_deadlock():
    # A handler runs on the interrupted thread; if that thread is inside Event.wait, it may hold the event's own
    # lock. Event.set from the handler then waits for ever on a lock its own thread holds (the scheduler once
    # never ended on SIGTERM). Here the "interrupted" thread holds that lock while the handler runs.
    stop = threading.Event()
    handler = stop_handler(stop, "tick")
    returned = threading.Event()

    def interrupted_inside_wait():
        with stop._cond:  # the lock Event.set takes, held as Event.wait holds it around its check
            handler(signal.SIGTERM, None)
            returned.set()

    worker = threading.Thread(target=interrupted_inside_wait, daemon=True)
    worker.start()
    worker.join(HANG_S)
    assert returned.is_set(), "the stop handler deadlocked on the stop event's lock"
    assert stop.wait(HANG_S), "the stop was never asked for"


def test_the_first_signal_asks_to_stop_and_the_second_aborts(capsys):
    stop = threading.Event()
    handler = stop_handler(stop, "agent step")
    handler(signal.SIGINT, None)
    assert stop.wait(HANG_S)
    with pytest.raises(KeyboardInterrupt):
        handler(signal.SIGINT, None)
    for _ in range(int(HANG_S * 100)):  # the message is printed by the thread that set the event
        if "stopping after the current agent step" in capsys.readouterr().err:
            break
        threading.Event().wait(0.01)
    else:
        pytest.fail("the stop was not announced")


def test_a_second_signal_aborts_even_before_the_first_has_set_the_event():
    stop = threading.Event()
    handler = stop_handler(stop)
    with stop._cond:  # the first call's thread cannot set the event yet
        handler(signal.SIGINT, None)
        with pytest.raises(KeyboardInterrupt):
            handler(signal.SIGINT, None)
    assert stop.wait(HANG_S)


def test_install_returns_the_handlers_it_replaced_so_they_can_be_restored():
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    stop = threading.Event()
    previous = install_stop_handlers(stop)
    try:
        assert previous == before
        assert signal.getsignal(signal.SIGTERM) is signal.getsignal(signal.SIGINT) is not before[signal.SIGINT]
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
    assert {sig: signal.getsignal(sig) for sig in before} == before
