"""The web layer: the tournament page (`arena web DIR`), its JSON and its live updates."""
