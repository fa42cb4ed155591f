"""The Gemini pack as obelize 0.8.0 ships it: its name and its sha256."""

from __future__ import annotations

GEMINI = "gemini/google-generativeai-to-google-genai"


GEMINI_SHA = "5017c6856ceb122c86fd13377b2ee4e8156741433d484ad46aa1ea4c97f728f7"


__all__ = ["GEMINI", "GEMINI_SHA"]
