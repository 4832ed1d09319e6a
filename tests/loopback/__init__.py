"""Loopback stand-ins for a user's model servers, used by the tests and ``benchmarks/``.

- :mod:`loopback.openai_server`: a small OpenAI-compatible chat server (a stand-in for vLLM).
- :mod:`loopback.embeddings_server`: the same for an embeddings endpoint (text and multimodal forms).
- :mod:`loopback.server`: the threaded JSON server both are built on.

The socket guard that keeps tests off the network lives in ``tests/netguard_site/netguard.py``.
"""
