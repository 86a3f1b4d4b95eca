"""PostgreSQL plumbing shared by the desk storage: the URL, a connection pool per URL, the schema.

* ``storage_url(config)``: ``config["storage_url"]``, else ``TRADINGAGENTS_STORAGE_URL``; ``""``
  or None means files. Only ``postgresql://`` / ``postgres://`` URLs are accepted.
* ``redact_url(url)``: the URL without its password (and query), for messages, reprs and saved
  records. A URL's credentials are never logged, saved or put in an exception message.
* ``database(url)``: the process's pool for the URL (one per process and URL, reopened in a forked
  child), with the schema created once, idempotently, under an advisory lock so that two machines
  starting together never race on ``CREATE``. ``with db.transaction() as conn:`` is one
  transaction (commit on success, rollback on error).

Text that PostgreSQL cannot hold (the NUL character) is stored as U+FFFD; everything else
round-trips exactly.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from tradingagents.errors import ConfigError, StorageError, StorageUnavailable, TradingAgentsError  # noqa: F401  (re-exported)
from tradingagents.urls import SCHEMES, redact_url, validate_storage_url  # noqa: F401  (re-exported)

ENV_VAR = "TRADINGAGENTS_STORAGE_URL"
CONNECT_TIMEOUT_S = 10
POOL_SIZE = 8  # connections per process and URL; a batch's runs share them

# Advisory lock keys: (namespace, key) pairs keep our locks apart from anyone else's.
LOCK_NAMESPACE = 0x7A5C
LOCK_SCHEMA = 1
LOCK_LOG_WRITE = 2
LOCK_CHECKPOINT_SETUP = 3
LOCK_AUDIT = 4  # one appender of the audit chain at a time (each entry names the previous one's hash)
LOCK_ROLE_MEMORY = 0x7A5D  # second key: hashtext(role name)

SCHEMA = """
CREATE TABLE IF NOT EXISTS ta_memory_log (
    id          bigserial PRIMARY KEY,
    trade_date  date NOT NULL,
    ticker      text NOT NULL,
    rating      text NOT NULL,
    decision    text NOT NULL,
    pending     boolean NOT NULL DEFAULT true,
    raw_return  double precision,
    alpha       double precision,
    holding     integer,
    reflection  text NOT NULL DEFAULT '',
    stored_at   timestamptz NOT NULL DEFAULT now(),
    settled_at  timestamptz,
    CONSTRAINT ta_memory_log_one_per_day UNIQUE (trade_date, ticker),
    CONSTRAINT ta_memory_log_settled_has_outcome
        CHECK (pending OR (raw_return IS NOT NULL AND alpha IS NOT NULL AND holding IS NOT NULL))
);
CREATE INDEX IF NOT EXISTS ta_memory_log_settled_by_date
    ON ta_memory_log (trade_date DESC, id DESC) WHERE NOT pending;

CREATE TABLE IF NOT EXISTS ta_role_memory (
    id              bigserial PRIMARY KEY,
    name            text NOT NULL,
    situation       text NOT NULL,
    recommendation  text NOT NULL,
    known_from      date,
    added_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS ta_role_memory_by_name ON ta_role_memory (name, id);
-- the lesson's id (memory.situation_memory.lesson_id: sha256 of "lesson", situation and text joined by
-- U+001F, first 12 hex digits), kept by the server so a write-once check is one indexed lookup
-- (declared immutable: convert_to with a fixed encoding always gives the same bytes)
CREATE OR REPLACE FUNCTION ta_lesson_id(situation text, recommendation text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS
    $$ SELECT left(encode(sha256(convert_to('lesson' || E'\\x1f' || situation || E'\\x1f' || recommendation,
                                            'UTF8')), 'hex'), 12) $$;
ALTER TABLE ta_role_memory ADD COLUMN IF NOT EXISTS lesson_id text
    GENERATED ALWAYS AS (ta_lesson_id(situation, recommendation)) STORED;
CREATE INDEX IF NOT EXISTS ta_role_memory_by_lesson ON ta_role_memory (name, lesson_id);
ALTER TABLE ta_role_memory ADD COLUMN IF NOT EXISTS source text;  -- the decision a settled lesson came from
CREATE INDEX IF NOT EXISTS ta_role_memory_by_source ON ta_role_memory (name, source) WHERE source IS NOT NULL;
CREATE TABLE IF NOT EXISTS ta_role_memory_retired (
    name        text NOT NULL,
    lesson_id   text NOT NULL,
    retired_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (name, lesson_id)
);
CREATE TABLE IF NOT EXISTS ta_role_memory_generation (
    name        text PRIMARY KEY,
    generation  bigint NOT NULL
);

CREATE TABLE IF NOT EXISTS ta_runs (
    ticker      text NOT NULL,
    trade_date  date NOT NULL,
    rating      text,
    saved_at    timestamptz NOT NULL,
    saved_at_text   text NOT NULL,
    llm_provider    text,
    data_vendor     text,
    doc         text NOT NULL,
    report      text NOT NULL,
    PRIMARY KEY (ticker, trade_date)
);

CREATE TABLE IF NOT EXISTS ta_run_versions (
    ticker      text NOT NULL,
    trade_date  date NOT NULL,
    version     integer NOT NULL,
    rating      text,
    saved_at    timestamptz NOT NULL,
    saved_at_text   text NOT NULL,
    llm_provider    text,
    data_vendor     text,
    doc         text NOT NULL,
    report      text NOT NULL,
    PRIMARY KEY (ticker, trade_date, version)
);

-- a run's row in the listing (storage.files_runs.listing_fields of its meta), so a listing reads no document;
-- a row saved before the column is listed from its document, and then given its listing
ALTER TABLE ta_runs ADD COLUMN IF NOT EXISTS listing jsonb;
ALTER TABLE ta_runs ADD COLUMN IF NOT EXISTS memory_used jsonb;  -- meta.memory_used (JSON null: none), the same way
ALTER TABLE ta_run_versions ADD COLUMN IF NOT EXISTS listing jsonb;

CREATE TABLE IF NOT EXISTS ta_run_forks (
    ticker      text NOT NULL,
    trade_date  date NOT NULL,
    n           integer NOT NULL,
    rating      text,
    saved_at    timestamptz NOT NULL,
    saved_at_text   text NOT NULL,
    llm_provider    text,
    data_vendor     text,
    doc         text NOT NULL,
    report      text NOT NULL,
    PRIMARY KEY (ticker, trade_date, n)
);

CREATE TABLE IF NOT EXISTS ta_run_segments (
    name        text PRIMARY KEY,
    doc         jsonb NOT NULL,
    saved_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS ta_app_runs (
    thread_id   text PRIMARY KEY,
    doc         jsonb NOT NULL,
    saved_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS ta_watchlists (
    name        text PRIMARY KEY,
    tickers     jsonb NOT NULL,
    saved_at    timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE ta_watchlists ADD COLUMN IF NOT EXISTS owner text;  -- who saved it first (ownership.py)

CREATE TABLE IF NOT EXISTS ta_desk_docs (
    name        text PRIMARY KEY,
    doc         jsonb NOT NULL,
    saved_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS ta_desk_claims (
    key         text PRIMARY KEY,
    doc         jsonb NOT NULL DEFAULT '{}'::jsonb,
    claimed_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS ta_audit (
    id          bigserial PRIMARY KEY,
    at          double precision NOT NULL,
    by_user     text NOT NULL,
    action      text NOT NULL,
    target      text NOT NULL DEFAULT '',
    detail      jsonb NOT NULL DEFAULT '{}'::jsonb
);
-- the hash chain (storage/audit.py): each row's canonical text and hash, which covers the previous row's
ALTER TABLE ta_audit ADD COLUMN IF NOT EXISTS body text NOT NULL DEFAULT '';
ALTER TABLE ta_audit ADD COLUMN IF NOT EXISTS prev_hash text NOT NULL DEFAULT '';
ALTER TABLE ta_audit ADD COLUMN IF NOT EXISTS entry_hash text NOT NULL DEFAULT '';
-- append-only for every login of the desk, the shared one included: no UPDATE, DELETE or TRUNCATE
CREATE OR REPLACE FUNCTION ta_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ta_audit is append-only: % is refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE OR REPLACE TRIGGER ta_audit_no_change BEFORE UPDATE OR DELETE ON ta_audit
    FOR EACH ROW EXECUTE FUNCTION ta_audit_append_only();
CREATE OR REPLACE TRIGGER ta_audit_no_truncate BEFORE TRUNCATE ON ta_audit
    FOR EACH STATEMENT EXECUTE FUNCTION ta_audit_append_only();
"""


def storage_url(config: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> str | None:
    """The database URL in force, or None for the embedded files.

    ``config["storage_url"]`` wins when the key is present and not None (``""`` forces files);
    else ``TRADINGAGENTS_STORAGE_URL``.
    """
    environ = os.environ if environ is None else environ
    value = (config or {}).get("storage_url")
    if value is not None:
        return validate_storage_url(value, 'config["storage_url"]') or None
    return validate_storage_url(environ.get(ENV_VAR), f"environment variable {ENV_VAR}") or None


def scrub(message: object, url: str) -> str:
    """An error message with the URL's password (if any) taken out."""
    text = str(message)
    try:
        password = urlsplit(url).password
    except ValueError:
        password = None
    text = text.replace(url, redact_url(url))
    if password:  # only where it stands alone: "p" inside "port" is not the password, and starring it there would tell it
        text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(password)}(?![A-Za-z0-9])", "***", text)
    return text


def storage_error(doing: str, url: str, exc: BaseException) -> StorageError:
    """One plain line: what failed, the host (never the password), why, and what to check."""
    try:
        parts = urlsplit(url)
        host = f"{parts.hostname or 'localhost'}:{parts.port or 5432}"
    except ValueError:
        host = "the server"
    why = " ".join(scrub(exc, url).split()) or type(exc).__name__
    if len(why) > 300:
        why = why[:297] + "…"
    return StorageError(
        f"Cannot {doing} the desk database {redact_url(url)} ({why}). Check that PostgreSQL is running on "
        f"{host} and accepts this user, and that storage_url / {ENV_VAR} is right, or leave it empty to use files."
    )


def pg_text(value: str) -> str:
    """Text as PostgreSQL can store it (it has no NUL character)."""
    return value.replace("\x00", "\ufffd") if "\x00" in value else value


def pg_storable(value: Any) -> Any:
    """``value`` (JSON types) as PostgreSQL keeps it exactly, in text and in jsonb alike: every string without a NUL
    character (U+FFFD in its place), the keys as strings."""
    if isinstance(value, str):
        return pg_text(value)
    if isinstance(value, dict):
        return {pg_storable(str(k)): pg_storable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [pg_storable(v) for v in value]
    return value


def pg_json(value: Any) -> str:
    """``value`` as JSON text a ``jsonb`` column takes (it refuses ``\\u0000``, the escape of a NUL): ``pg_storable``
    when the text holds one."""
    text = json.dumps(value, ensure_ascii=False)
    return json.dumps(pg_storable(value), ensure_ascii=False) if "\\u0000" in text else text


def _import_psycopg():
    try:
        import psycopg
        import psycopg_pool
    except ImportError as exc:  # pragma: no cover - pinned in requirements.txt
        raise StorageError(
            f"storage_url needs the PostgreSQL driver ({exc.name}); install the pinned requirements: "
            "pip install -r requirements.txt."
        ) from exc
    return psycopg, psycopg_pool


class Database:
    """A connection pool on one URL with the desk schema in place; see the module docstring."""

    def __init__(self, url: str) -> None:
        psycopg, psycopg_pool = _import_psycopg()
        self.url = url
        self.label = redact_url(url)
        self._psycopg = psycopg
        try:  # one direct connection first: a wrong URL fails at once, not after the pool's retries
            with psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S) as conn:
                self._create_schema(conn)
        except psycopg.Error as exc:
            raise self.error("open", exc) from None
        self.pool = psycopg_pool.ConnectionPool(
            url,
            min_size=1,
            max_size=POOL_SIZE,
            kwargs={"connect_timeout": CONNECT_TIMEOUT_S},
            check=psycopg_pool.ConnectionPool.check_connection,
            num_workers=1,
            open=True,
            name="tradingagents",
        )

    def error(self, doing: str, exc: BaseException) -> StorageError:
        return storage_error(doing, self.url, exc)

    @staticmethod
    def _create_schema(conn: Any) -> None:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_NAMESPACE, LOCK_SCHEMA))
            conn.execute(SCHEMA)

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """One transaction on a pooled connection; database errors become StorageError."""
        psycopg = self._psycopg
        try:
            # a pool that cannot reach the server says so after the connect timeout, not the pool's default 30 s
            with self.pool.connection(timeout=CONNECT_TIMEOUT_S) as conn, conn.transaction():
                yield conn
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:  # PoolTimeout included
            raise self.error("use", exc) from None

    def close(self) -> None:
        self.pool.close()


_DBS: dict[tuple[int, str], Database] = {}
_DBS_LOCK = threading.Lock()


def database(url: str) -> Database:
    """The process's ``Database`` for a URL (created on first use)."""
    key = (os.getpid(), url)
    with _DBS_LOCK:
        db = _DBS.get(key)
        if db is None:
            db = _DBS[key] = Database(url)
        return db


def close_databases() -> None:
    """Close every pool this process opened (tests call it between databases; also at exit)."""
    with _DBS_LOCK:
        mine = [k for k in _DBS if k[0] == os.getpid()]
        dbs = [_DBS.pop(k) for k in mine]
    for db in dbs:
        db.close()


atexit.register(close_databases)


def run_lock_key(ticker: str, thread_id: str) -> int:
    """A signed 64-bit advisory-lock key for one run thread (stable across machines)."""
    import hashlib

    digest = hashlib.sha256(f"tradingagents-run:{ticker}:{thread_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@contextmanager
def pg_run_lock(url: str, ticker: str, thread_id: str) -> Iterator[None]:
    """Hold a session advisory lock for one run thread on a connection of its own.

    Yields when the lock was free; raises RunAlreadyActive when any process on any machine holds
    it. The server releases it when the connection closes, so a killed process never leaves a
    stale lock behind (unlike a lock file on a shared disk).
    """
    psycopg, _ = _import_psycopg()
    from tradingagents.errors import RunAlreadyActive

    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.Error as exc:
        raise storage_error("reach (to lock the run)", url, exc) from None
    try:
        got = conn.execute("SELECT pg_try_advisory_lock(%s)", (run_lock_key(ticker, thread_id),)).fetchone()[0]
        if not got:
            raise RunAlreadyActive(
                f"An analysis of {ticker} with these settings is already running on the desk (this machine "
                "or another one sharing the database). Wait for it to finish or stop it, then try again."
            )
        yield
    finally:
        conn.close()
