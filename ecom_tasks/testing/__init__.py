"""Test utilities shipped with the package so users can reuse them in their own tests.

- :mod:`ecom_tasks.testing.openai_server`: a tiny local OpenAI-compatible server
  (a stand-in for a user's vLLM server).
- :mod:`ecom_tasks.testing.embeddings_server`: the same for an embeddings endpoint
  (vLLM serving an embedding model, text and multimodal forms).
- :mod:`ecom_tasks.testing.netguard`: a socket guard that blocks and records any
  connection to a non-loopback address.
"""
