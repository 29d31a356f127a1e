"""Operations on live surveys: transactions export, open-ended check, adjustments, return links.

Each module is plain Python over the API client; the CLI modules only parse options and render.
"""
