"""Retrieval over the knowledge base: fingerprint scanning, BM25, dense embeddings, fusion."""
