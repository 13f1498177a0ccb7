"""Core values every room shares, with no storage behind them: the pure engine, the dispatcher
and the state backends all import them from here.

    route.py      ConversationKey (who a route belongs to), Route (what is kept per conversation)
    delivery.py   DeliveryKey (channel, delivery id), DecisionMemo (a delivery's first decision)
"""

from stickyroute.core.delivery import DecisionMemo, DeliveryKey
from stickyroute.core.route import ConversationKey, Route

__all__ = ["ConversationKey", "DecisionMemo", "DeliveryKey", "Route"]
