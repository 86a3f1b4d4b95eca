"""Every chat model of a process shares one HTTP client (per basic-auth pair), as langchain-openai shares
its default one: a new team (each run of a batch, each job of the app, each morning's desk run) reuses the
connections the last one left open instead of connecting, and with a real provider shaking hands over
TLS, again. Against the fake OpenAI server on 127.0.0.1, which counts the TCP connections it accepts."""

from __future__ import annotations

import multiprocessing

from tests.fake_openai import FakeOpenAIServer
from tradingagents.llm_clients.factory import create_llm
from tradingagents.llm_clients.text import valid_unicode_http_client

PROMPT = "Instrument: NVDA\nAnalysis date: 2024-05-10\nSay something."


def test_models_built_one_after_another_reuse_one_connection():
    with FakeOpenAIServer() as server:
        # three models, each built new, as each run builds its team's
        for kind in ("quick", "deep", "quick"):
            assert create_llm(server.llm_config(), kind).invoke(PROMPT).content
        assert len(server.requests) == 3
        assert server.connections == 1


def test_one_model_closing_its_client_does_not_cut_off_the_others():
    with FakeOpenAIServer() as server:
        first, second = create_llm(server.llm_config()), create_llm(server.llm_config())
        first.root_client.close()  # what the SDK's own close (or a context manager) does
        assert second.invoke(PROMPT).content
        assert first.invoke(PROMPT).content
        assert server.connections == 1


def test_basic_auth_in_the_url_gets_its_own_client():
    with FakeOpenAIServer() as server:
        plain = create_llm(server.llm_config())
        with_auth = create_llm(server.llm_config(backend_url=server.base_url.replace("http://", "http://ann:pw@")))
        assert with_auth.root_client._client is not plain.root_client._client
        assert with_auth.root_client._client.auth is not None and plain.root_client._client.auth is None
        assert with_auth.invoke(PROMPT).content and plain.invoke(PROMPT).content
        assert server.connections == 2  # one pool each: the credentials never ride on the other's requests


def _child(url: str, out) -> None:
    client = valid_unicode_http_client()
    ok = client.post(url + "/chat/completions", json={"model": "fake-quick", "stream": False,
                                                        "messages": [{"role": "user", "content": PROMPT}]}).status_code
    out.send((client is not _PARENT[0], ok))


_PARENT: list = []


def test_a_forked_child_opens_its_own_connections_not_the_parents():
    """A connection is a socket of the parent: a forked worker that wrote on it too would interleave two
    requests on one stream. The child builds its own client and connection."""
    with FakeOpenAIServer() as server:
        parent = valid_unicode_http_client()
        _PARENT[:] = [parent]
        assert parent.post(server.base_url + "/chat/completions", json={
            "model": "fake-quick", "stream": False, "messages": [{"role": "user", "content": PROMPT}]}).status_code == 200
        assert server.connections == 1
        ctx = multiprocessing.get_context("fork")
        recv, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(server.base_url, send))
        proc.start()
        assert recv.poll(120), "the forked child never answered"
        fresh, status = recv.recv()
        proc.join(120)
        assert fresh and status == 200
        assert server.connections == 2  # the child's own
