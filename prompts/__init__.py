"""Prompt templates (package data: `rag.prompts` in the wheel)."""
