"""Embeds a sentence with the pre-1.0 client."""

import openai


def embed(sentence):
    result = openai.Embedding.create(input=sentence, model="text-embedding-3-small")
    return result.data[0].embedding
