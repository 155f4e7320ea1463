"""A bot of the user's own, kept in the checkout's bots/ (round 51's upgrade fixture)."""

from bots.random_bot import RandomBot


class Mine(RandomBot):
    """The bundled random bot, by another name."""
