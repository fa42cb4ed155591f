"""The model arrives as a parameter, so no rule can tell which object it is."""

import google.generativeai as genai


def ask(model, prompt):
    return model.generate_content(prompt).text


def main():
    genai.configure(api_key="offline")
    print(ask(genai.GenerativeModel("gemini-1.5-flash"), "hello"))
