"""The one error hierarchy of the engine. Each class knows its CLI exit code and whether it resumes.

The CLI maps an exception to its exit code with ``exit_code_for`` (walking ``__cause__`` for errors
wrapped by LangGraph); nothing classifies errors by their message text. Pages show ``str(exc)``,
which is always a plain sentence that says what to do (never the class name).

| class | exit | resumable | meaning |
|---|---|---|---|
| ``ConfigError`` | 2 | no | a setting or environment variable cannot work (named in the message) |
| ``ValidationError`` (``InvalidTickerError``, ``InvalidDateError``) | 2 | no | input the user can fix |
| ``LLMConfigError`` | 2 | no | unknown provider, missing key or URL: nothing ran |
| ``DataUnavailable`` (``ProviderUnavailable``, ``DataNotFound``) | 3 | no | the data source cannot serve |
| ``LLMCallError`` | 4 | yes | a model call failed for good after retries; the checkpoint is kept |
| ``LocalServerUnreachable`` | 4 | no | a local model server (Ollama…) accepts no connection within 5 s: nothing ran |
| ``RunStopped`` | 5 | yes | stopped by the user between two steps |
| ``BudgetExceeded`` | 5 | yes | the next step would exceed the cost budget |
| ``RunAlreadyActive`` | 6 | no | the same ticker, date and graph is already running |
| ``NotAllowed`` | 2 | no | the ownership table (``ownership.py``) gives this person no right to it |
| ``UnknownInstrumentError`` | 2 | no | the demo market does not list the ticker (closest known tickers suggested) |
| ``BadCSVError`` | 3 | no | a CSV file has rows that do not parse, too little history or non-daily bars |
| ``CheckpointError`` | 1 | no | the checkpoint database cannot be opened or written |
| ``StorageUnavailable`` | 7 | yes | the desk database cannot be reached, refuses the login or went away mid-run |
| ``StorageError`` | 7 | yes | (a ``StorageUnavailable``) what the desk storage raises: host named, never the password |
| anything else | 1 | (checkpoint kept) | a bug |

This module imports nothing from the package, so every layer may raise these.
"""

from __future__ import annotations

from typing import Any

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_BAD_INPUT = 2
EXIT_DATA_UNAVAILABLE = 3
EXIT_LLM_FAILURE = 4
EXIT_STOPPED = 5
EXIT_BUSY = 6
EXIT_STORAGE = 7


class TradingAgentsError(Exception):
    """Base of every error the engine raises on purpose."""

    exit_code: int = EXIT_ERROR
    resumable: bool = False


# ---------------------------------------------------------------------------- bad input (exit 2)


class NotAllowed(TradingAgentsError):
    """The ownership table (``tradingagents/ownership.py``) does not let this person do this (nothing changed)."""

    exit_code = EXIT_BAD_INPUT
class ConfigError(TradingAgentsError, ValueError):
    """A configuration value (from a dict, the environment or a flag) is not usable.

    ``key``: the setting it is about, ``env_var``: the environment variable the value came from (None:
    not from the environment), so a CLI can name its flag and a page its field. ``say``: the message as a
    catalogue id (marked ``N_``) and its fields, for a page to say it in its own language; None: the
    message is English only (``str(exc)``)."""

    exit_code = EXIT_BAD_INPUT
    key: str | None = None
    env_var: str | None = None
    say: tuple[str, dict[str, Any]] | None = None


class ValidationError(TradingAgentsError, ValueError):
    """Input the user can fix; the message says what is wrong and what is accepted."""

    exit_code = EXIT_BAD_INPUT


class InvalidTickerError(ValidationError):
    pass


class InvalidDateError(ValidationError):
    pass


class UnknownInstrumentError(InvalidTickerError):
    """The data source does not know the ticker; ``suggestions`` holds the closest known tickers."""

    def __init__(self, message: str, *, ticker: str = "", suggestions: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.ticker = ticker
        self.suggestions = tuple(suggestions)


class LLMConfigError(ConfigError):
    """The LLM settings cannot work (unknown provider, missing key, missing URL): nothing ran."""


# ---------------------------------------------------------------------------- data (exit 3)
class DataUnavailable(TradingAgentsError):
    """The market data source cannot serve what the run needs."""

    exit_code = EXIT_DATA_UNAVAILABLE


class ProviderUnavailable(DataUnavailable):
    """The data source cannot be reached or failed; the message is plain and says what to do."""


class DataNotFound(DataUnavailable):
    """There is no data for this request (e.g. the CSV file is missing, the source has no such data)."""


class BadCSVError(DataNotFound):
    """A CSV file that cannot be trusted whole: rows that do not parse (with their line numbers), too
    little history for the indicators, or bars that are not daily. ``path`` names the file."""

    def __init__(self, message: str, *, path: str = "", bad_lines: tuple[int, ...] = ()) -> None:
        super().__init__(message)
        self.path = path
        self.bad_lines = tuple(bad_lines)


# ---------------------------------------------------------------------------- model (exit 4)
class LLMCallError(TradingAgentsError, RuntimeError):
    """A model call that failed for good (after the bounded retries), with a plain message.

    Attributes: ``status`` (HTTP status or None), ``provider``, ``model``, ``retryable`` (whether
    trying again later may help: rate limits, server errors, timeouts, connection failures).
    """

    exit_code = EXIT_LLM_FAILURE
    resumable = True

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        provider: str | None = None,
        model: str | None = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.status_code = status
        self.provider = provider
        self.model = model
        self.retryable = retryable


class LocalServerUnreachable(LLMCallError):
    """A local model server (Ollama, vLLM, LM Studio) does not accept a connection within
    ``LOCAL_CONNECT_TIMEOUT_S``: said before the run starts, so nothing is checkpointed."""

    resumable = False


# ---------------------------------------------------------------------------- stopped (exit 5)
class RunStopped(TradingAgentsError):
    """Raised inside propagate when ``should_stop()`` returned True between two steps.

    The checkpoint is kept, so the same propagate call resumes where it stopped.
    """

    exit_code = EXIT_STOPPED
    resumable = True


class RunPaused(RunStopped):
    """The run reached a judge it was told to pause before (``pause_before``): it waits at its checkpoint,
    where the portfolio manager may add a note (``TradingAgentsGraph.add_pm_note``); the same propagate
    call continues it. ``before`` is the judge's roster key."""

    def __init__(self, message: str, before: str | None = None) -> None:
        super().__init__(message)
        self.before = before


class BudgetExceeded(RunStopped):
    """The next step would exceed the run's or the batch's cost budget; raise it to continue."""


# ---------------------------------------------------------------------------- busy (exit 6)
class RunAlreadyActive(TradingAgentsError, RuntimeError):
    """The same ticker, date and graph is being analysed right now (same or another process)."""

    exit_code = EXIT_BUSY


# ---------------------------------------------------------------------------- storage (exit 7, 1)
class CheckpointError(TradingAgentsError, RuntimeError):
    """The checkpoint database cannot be opened or written."""


class StorageUnavailable(TradingAgentsError, RuntimeError):
    """The storage behind the run (the desk's PostgreSQL database) cannot be reached, refuses the
    login, or was lost mid-run. What was saved stays saved: a run keeps its checkpoint up to the
    last finished step (with its counters), so running the same command again once the database is
    back resumes. The message names the database without its password."""

    exit_code = EXIT_STORAGE
    resumable = True


class StorageError(StorageUnavailable):
    """The desk database cannot be reached or used: one plain line naming the host (never the
    password) and what to check. Not a bug: its own exit code, 7; a batch stops at once."""


def exit_code_for(exc: BaseException) -> int:
    """The CLI exit code of an exception: its class's, else the first classified cause, else 1."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, TradingAgentsError):
            return current.exit_code
        current = current.__cause__ or current.__context__
    return EXIT_ERROR


def is_resumable(exc: BaseException) -> bool:
    """Whether running the same thing again continues from the checkpoint (a bug keeps it too)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, TradingAgentsError):
            return current.resumable
        current = current.__cause__ or current.__context__
    return True  # an unexpected failure mid-graph keeps its checkpoint
