"""Thousand Arena's server side: the referee, tournaments, storage, ratings, leaderboard, CLI.

Kept import-light on purpose: ``arena.v1`` (generated protocol code) and
``arena.protocol`` are imported by bot processes too.
"""
