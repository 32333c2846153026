"""PaperTalk web UI: a thin Gradio adapter over `rag` (see ui/README.md)."""
