"""Exploring a whole collection: paper vectors, a topic map, similar papers."""
