"""Seeing a game: the replay viewer's page data (model), its self-contained HTML file (page)
with one renderer per game (assets/), and the terminal stepper (stepper)."""
