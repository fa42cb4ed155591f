"""Asks the chat model one question; the response shape changed in 1.0, so this is held."""

import openai


def ask(question):
    return openai.ChatCompletion.create(model="gpt-3.5-turbo", messages=[{"role": "user", "content": question}])
