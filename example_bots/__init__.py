"""Example bots on the SDK: a random, a first-legal-action and a search (ISMCTS) bot for any
game, and a strategy bot per game.

`example:NAME` in a bot SPEC names one of EXAMPLES ("module:Class", imported on demand).
"""

EXAMPLES: dict[str, str] = {
    "random": "example_bots.random_bot:RandomBot",
    "first": "example_bots.first_bot:FirstLegalBot",
    "ismcts": "example_bots.ismcts_bot:IsmctsBot",
    "officers-battle": "example_bots.officers_battle_bot:OfficersBattleBot",
    "capture-the-commander": "example_bots.capture_the_commander_bot:CaptureTheCommanderBot",
    "strato-sphere": "example_bots.strato_sphere_bot:StratoSphereBot",
    "opposing-force": "example_bots.opposing_force_bot:OpposingForceBot",
    "orc-pit-fighting": "example_bots.orc_pit_fighting_bot:OrcPitFightingBot",
}
