"""The pure rules engine of the card game 1000 (Тысяча) and 1001.

No I/O (except reading a ruleset TOML file in :func:`load_ruleset`), no grpc, asyncio,
time, logging or global random: a match is reproducible from (ruleset, seed, actions).

>>> from engine import Game, observe
>>> g = Game.new("classic", seed=42, players=["a", "b", "c"])
>>> g.apply(g.legal_actions()[0], seat=g.to_act)
>>> observe(g, 0).deal_number
0
"""

from engine.actions import (
    Action,
    ActionParseError,
    Bid,
    Concede,
    Contract,
    Give,
    Pass,
    Play,
    ThrowIn,
    action_sort_key,
    fallback_action,
    parse_action,
)
from engine.cards import (
    ACE_MARRIAGE_VALUE,
    DECK,
    MARRIAGE_VALUES,
    Card,
    CardParseError,
    Rank,
    Suit,
    card_points,
    cards_from_mask,
    format_cards,
    mask_of,
    parse_card,
    parse_cards,
)
from engine.errors import (
    AlreadyPassedError,
    BidError,
    CardNotHeldError,
    ConcedeError,
    ContractError,
    GameOverError,
    GiveError,
    IllegalActionError,
    MarriageError,
    NotAnActionError,
    NotYourTurnError,
    PlayError,
    ThrowInError,
    WrongPhaseError,
)
from engine.game import DealResult, Game, GameResult, Phase, Trick, talon_score, trick_winner
from engine.record import RECORD_FORMAT, ReplayError, record, replay
from engine.rules import PRESETS, Ruleset, RulesetError, load_ruleset
from engine.view import HiddenGive, PlayerView, observe, public_action

__all__ = [
    "ACE_MARRIAGE_VALUE",
    "DECK",
    "MARRIAGE_VALUES",
    "PRESETS",
    "RECORD_FORMAT",
    "Action",
    "ActionParseError",
    "AlreadyPassedError",
    "Bid",
    "BidError",
    "Card",
    "CardNotHeldError",
    "CardParseError",
    "Concede",
    "ConcedeError",
    "Contract",
    "ContractError",
    "DealResult",
    "Game",
    "GameOverError",
    "GameResult",
    "Give",
    "GiveError",
    "HiddenGive",
    "IllegalActionError",
    "MarriageError",
    "NotAnActionError",
    "NotYourTurnError",
    "Pass",
    "Phase",
    "Play",
    "PlayError",
    "PlayerView",
    "Rank",
    "ReplayError",
    "Ruleset",
    "RulesetError",
    "Suit",
    "ThrowIn",
    "ThrowInError",
    "Trick",
    "WrongPhaseError",
    "action_sort_key",
    "card_points",
    "cards_from_mask",
    "fallback_action",
    "format_cards",
    "load_ruleset",
    "mask_of",
    "observe",
    "parse_action",
    "parse_card",
    "parse_cards",
    "public_action",
    "record",
    "replay",
    "talon_score",
    "trick_winner",
]
