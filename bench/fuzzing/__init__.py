"""Fuzzing the channel adapters and the dispatcher (issue #10): hypothesis strategies of Telegram
updates and WhatsApp notifications from the platforms' schemas, byte-level mutations of the
shipped payloads, and the properties every input must keep.

    strategies.py   telegram_bodies(), whatsapp_bodies(), mutated_payloads(), any_body()
    properties.py   check_adapter(platform, body) and check_proxy(...): [] or the violations

A bounded profile runs in `make test` (tests/fuzz/); `make fuzz` runs 100,000 inputs and prints
the count of failures (bench/fuzz.py).
"""
