"""The reliability tools (issue #10): a platform simulator, fake agents and a fake Groq server on
127.0.0.1, the proxy as a real process, and a ledger that checks every update was delivered to
exactly one agent exactly once (or is still being retried).

    book.py       Ledger: what was sent, acknowledged and received; the counts and latencies
    agents.py     FakeAgent: an agent webhook that records every update id it accepts; faults
    groq.py       FakeGroq: an OpenAI-compatible chat-completions server; down, slow, garbage
    traffic.py    Telegram updates and WhatsApp notifications from S senders over C chats
    platforms.py  TelegramBot, MetaApp: post until 2xx with the platforms' retry behaviour
    proxy.py      ProxyProcess: `stickyroute serve` on a generated config; SIGKILL, restart, RSS
    scenarios.py  the fault scenarios and the runner that plays them
    report.py     the printed tables

Run by `make faults` (every scenario, long form), `make soak` and, short, by `make test`
(tests/reliability/).
"""
