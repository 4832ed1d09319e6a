"""RMIR: reasoning-intensive multimodal image retrieval (Li et al.), framework-neutral; see README.md."""
