"""Writes a haiku about a topic: one module, one configure, one model used where it is built."""

import os

import google.generativeai as genai

genai.configure(api_key=os.environ.get("GEMINI_API_KEY", "offline"))


def haiku(topic):
    model = genai.GenerativeModel("gemini-1.5-flash")
    return model.generate_content(f"A haiku about {topic}").text
