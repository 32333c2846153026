"""The bundled corpus (package data: `rag.data` in the wheel)."""
