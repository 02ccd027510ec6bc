"""The Orc Pit Fighting engine against its rules (docs/games/orc-pit-fighting.md), a module for
each part: random playouts with the generic invariants, determinism and information, and a scripted
scenario for every example in the seed, every Result cap, every Draw pairing and every ruling of
the rules page (scenario.py lays out the tables)."""
