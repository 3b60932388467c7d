"""The self-play recipe: one policy trained on every seat of the self-play batch, started from a clone of a search,
against a league of its snapshots and the hand-written agents, with a critic that sees every hand and rewards
shaped towards winning games (``python -m allfives_training.selfplay --config configs/selfplay_2p.yaml``)."""
