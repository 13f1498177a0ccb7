"""Hypothesis strategies for the Slack, Discord, LINE, Messenger and Instagram webhook bodies
(platforms.md 5-8 and the adapters' tables): every event kind, wrong types, odd values, forms.

    slack_bodies(), discord_bodies(), line_bodies(), meta_bodies(obj)  -> st.SearchStrategy[bytes]
"""

from __future__ import annotations

from urllib.parse import urlencode

from hypothesis import strategies as st

from bench.fuzzing.strategies import _obj, ids, junk, maybe, serialised, texts

__all__ = ["discord_bodies", "line_bodies", "meta_bodies", "slack_bodies"]

SLACK_EVENTS = ("message", "app_mention", "reaction_added", "reaction_removed", "member_joined_channel",
                "app_home_opened", "team_join", "assistant_thread_started", "app_uninstalled", "tokens_revoked",
                "future_kind")
SLACK_SUBTYPES = ("bot_message", "message_changed", "message_deleted", "message_replied", "thread_broadcast",
                  "file_share", "channel_join", "me_message", "assistant_app_thread", "weird")
SLACK_INTERACTIONS = ("block_actions", "block_suggestion", "view_submission", "view_closed", "shortcut",
                      "message_action", "interactive_message", "dialog_submission", "weird")
SLACK_TEXTS = texts | st.sampled_from(["<@U1> @billing help", "<!subteam^S1|@ops> hi", "<https://x|@coder>",
                                       "&lt;@support&gt;", "<@U1", "<>", "/agent coder"])
LINE_EVENTS = ("message", "postback", "follow", "unfollow", "join", "leave", "memberJoined", "memberLeft", "unsend",
               "videoPlayComplete", "beacon", "accountLink", "membership", "activated", "botSuspended", "messageEdited",
               "weird")
META_KEYS = ("message", "message_edit", "postback", "reaction", "read", "delivery", "referral", "optin",
             "pass_thread_control", "app_roles", "weird")
META_FIELDS = ("messages", "comments", "live_comments", "mentions", "message_reactions", "messaging_seen", "weird")


slack_messages = _obj(type=st.sampled_from(SLACK_EVENTS), subtype=st.sampled_from(SLACK_SUBTYPES), user=ids,
                      channel=ids | st.sampled_from(["C1", "D1", "G1"]), channel_type=st.sampled_from(["im", "channel"]),
                      ts=ids, thread_ts=ids, parent_user_id=ids, bot_id=ids, text=SLACK_TEXTS, client_msg_id=ids,
                      item=_obj(channel=ids, ts=ids), assistant_thread=_obj(user_id=ids, channel_id=ids))
slack_events = _obj(type=st.sampled_from(SLACK_EVENTS), message=slack_messages,
                    previous_message=slack_messages) | slack_messages
slack_callbacks = _obj(type=st.sampled_from(["event_callback", "app_rate_limited", "url_verification", "x"]),
                       team_id=ids, enterprise_id=ids, event_id=ids, event=slack_events, challenge=texts,
                       minute_rate_limited=ids)
slack_interactions = _obj(type=st.sampled_from(SLACK_INTERACTIONS), user=_obj(id=ids), channel=_obj(id=ids),
                          container=_obj(channel_id=ids, message_ts=ids, thread_ts=ids), trigger_id=ids,
                          message=_obj(ts=ids, thread_ts=ids, text=texts), callback_id=texts,
                          actions=st.lists(_obj(value=texts, action_ts=ids, action_id=texts), max_size=2),
                          view=_obj(callback_id=texts, private_metadata=texts | st.just('{"channel_id": "C1"}')),
                          response_urls=st.lists(_obj(channel_id=ids), max_size=2))


@st.composite
def _slack_form(draw: st.DrawFn) -> bytes:
    form = draw(st.sampled_from(["payload", "command", "ssl", "other"]))
    if form == "payload":
        fields: dict[str, str] = {"payload": draw(serialised(slack_interactions)).decode("utf-8", "replace")}
    elif form == "command":
        fields = {"command": draw(st.sampled_from(["/agent", "/ask", "/AGENT", ""])), "text": draw(SLACK_TEXTS),
                  "user_id": draw(st.sampled_from(["U1", "", "W2"])), "channel_id": draw(st.sampled_from(["C1", "D1"])),
                  "trigger_id": draw(st.sampled_from(["t1", ""]))}
    elif form == "ssl":
        fields = {"ssl_check": draw(st.sampled_from(["1", "0"])), "token": "x"}
    else:
        fields = draw(st.dictionaries(texts, texts, max_size=3))
    return urlencode(fields, errors="surrogatepass").encode()


def slack_bodies() -> st.SearchStrategy[bytes]:
    return st.one_of(serialised(slack_callbacks), _slack_form())


discord_options = st.recursive(
    _obj(name=st.sampled_from(["name", "question", "x"]) | texts, type=st.integers(0, 12), value=ids | texts,
         focused=st.booleans()),
    lambda inner: _obj(name=texts, type=st.sampled_from([1, 2]), options=st.lists(inner, max_size=2)), max_leaves=5)
discord_interactions = _obj(
    id=ids, application_id=ids, type=st.integers(0, 7), token=texts, version=st.just(1), channel_id=ids,
    channel=_obj(id=ids, type=st.sampled_from([0, 1, 10, 11, 12]), parent_id=ids), guild_id=ids,
    member=_obj(user=_obj(id=ids)), user=_obj(id=ids), event=junk,
    data=_obj(name=st.sampled_from(["agent", "ask", "Agent"]) | texts, type=st.integers(1, 4),
              options=st.lists(discord_options, max_size=3), custom_id=texts, values=st.lists(texts, max_size=2)))


def discord_bodies() -> st.SearchStrategy[bytes]:
    return serialised(discord_interactions)


line_events = _obj(
    type=st.sampled_from(LINE_EVENTS), webhookEventId=ids, timestamp=ids, mode=texts,
    deliveryContext=_obj(isRedelivery=st.booleans()),
    source=_obj(type=st.sampled_from(["user", "group", "room"]), userId=ids, groupId=ids, roomId=ids),
    message=_obj(type=st.sampled_from(["text", "image", "sticker"]), id=ids, text=texts,
                 mention=_obj(mentionees=st.lists(_obj(index=st.integers(-2, 50), length=st.integers(-2, 50)),
                                                  max_size=3))),
    postback=_obj(data=texts))


def line_bodies() -> st.SearchStrategy[bytes]:
    return serialised(_obj(destination=ids, events=st.lists(line_events, max_size=4)))


people = _obj(id=ids, user_ref=ids)
meta_items = _obj(
    sender=people, recipient=people, timestamp=ids,
    **{key: _obj(mid=ids, text=texts, is_echo=st.booleans(), is_deleted=st.booleans(), quick_reply=_obj(payload=texts),
                 payload=texts, title=texts, action=texts, reaction=texts, watermark=ids, mids=st.lists(ids, max_size=2),
                 num_edit=ids, user_ref=ids)
       for key in META_KEYS})
meta_changes = _obj(field=st.sampled_from(META_FIELDS), value=meta_items | _obj(id=ids, text=texts, **{"from": people}))


def meta_bodies(obj: str) -> st.SearchStrategy[bytes]:
    entries = st.lists(_obj(id=ids, time=ids, messaging=st.lists(meta_items, max_size=3),
                            standby=st.lists(meta_items, max_size=2), changes=st.lists(meta_changes, max_size=2)),
                       max_size=3)
    objects = maybe(st.sampled_from([obj] * 4 + ["page", "instagram", 1]))
    return serialised(st.builds(lambda o, e: {"entry": e} if o is None else {"object": o, "entry": e},
                                objects | st.none(), entries))
