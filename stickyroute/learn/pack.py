"""Write a `LearnedPack` as a TOML rule pack (tomlkit), one comment per keyword.

The file loads with `stickyroute.config.rulepack.load_rule_pack` (keys `keywords`, `weak_keywords`
only) and merges into an agent with `rules = "<path>"`. Comments say where each keyword comes
from, so a user can read and edit the lists:

    keywords = [
        "guesthouse", # hotel 39/39 (100%), z 8.1, gate +12
        "hotel",      # yours; hotel 99/119 (83%), taxi 15, z 9.0, gate +31
    ]

`hotel 99/119 (83%)`: of the 119 learning messages containing the term, 99 were hotel's;
`taxi 15`: the largest other classes; `z`: the log-odds z-score (proxy.learn.scoring);
`gate +31`: routing decisions on the learning data that get worse without this keyword (net,
proxy.learn.selection); `yours`: it was already one of the agent's keywords. Your keywords the
gate check turned off are listed in the header with their evidence. Output is a function of the
pack alone: byte-identical for the same input.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import tomlkit

from stickyroute.learn.counts import BACKGROUND
from stickyroute.learn.learner import LearnedKeyword, LearnedPack

OTHERS_SHOWN = 2


def evidence(keyword: LearnedKeyword) -> str:
    """The comment of one keyword (see the module docstring)."""
    score = keyword.score
    parts = [f"{score.owner} {score.owner_messages}/{score.messages} ({score.share:.0%})"]
    parts += [f"{'background' if c == BACKGROUND else c} {n}" for c, n in score.others[:OTHERS_SHOWN]]
    text = ", ".join(parts) if score.messages else "not seen in the learning data"
    text += f", z {score.z:.1f}" if score.messages else ""
    if keyword.strength != "off":
        text += f", gate {round(keyword.gate_effect):+d}"
    return ("yours; " if keyword.origin == "yours" else "") + text


def render_pack(pack: LearnedPack, source: str, header: Sequence[str] = ()) -> str:
    """The pack as TOML text; `source` names what it was learned from, `header` adds lines."""
    doc = tomlkit.document()
    lines = [
        f'Rule pack "{pack.agent}", learned by `stickyroute learn` from {source}',
        f"({pack.messages} of the agent's messages counted). Use it with",
        f'rules = "<folder>/{pack.agent}.toml" in [agents.{pack.agent}] (relative to the config or agents file).',
        *header,
        "",
        "Each keyword's comment: agent messages containing it / all learning messages containing it",
        "(share), the largest other classes, log-odds z-score, and the routing decisions on the",
        "learning data it makes right (gate, net). `yours`: it was already one of your keywords.",
    ]
    if pack.dropped:
        lines += ["", "Your keywords left out: the data contradicts them, or on the learning messages they route",
                  "more wrong than right. Remove them from the agent's own lists too, or merging this pack",
                  "brings them back:"]
        lines += [f"  {tomlkit.string(k.spelling).as_string()}: {evidence(k)}" for k in pack.dropped]
    for line in lines:
        doc.add(tomlkit.comment(line) if line else tomlkit.nl())
    doc.add(tomlkit.nl())
    doc.add("keywords", _array(pack.keywords))
    doc.add("weak_keywords", _array(pack.weak_keywords))
    if pack.sticky_bonus_offset:
        doc.add(tomlkit.nl())
        doc.add(tomlkit.comment(f"Extra sticky bonus while {pack.agent} holds a route: one keyword of another agent "
                                f"no longer ties it (gate {round(pack.offset_effect):+d})"))
        doc.add("sticky_bonus_offset", pack.sticky_bonus_offset)
    if pack.two_topic_confirm:
        doc.add(tomlkit.nl())
        gate = f" (gate {round(pack.two_topic_effect):+d})" if pack.two_topic_effect else ""
        doc.add(tomlkit.comment(f"A second topic after {pack.agent}'s own business is confirmed by the classifier, "
                                f"not switched by keywords{gate}"))
        doc.add("two_topic_confirm", True)
    if pack.confirm_keywords:
        doc.add(tomlkit.nl())
        doc.add(tomlkit.comment("Strong, but never deciding alone: right often enough to ask the classifier, "
                                "not to decide"))
        doc.add("confirm_keywords", _array(pack.confirm_keywords))
    return tomlkit.dumps(doc)


def _array(keywords: Sequence[LearnedKeyword]) -> tomlkit.items.Array:
    array = tomlkit.array()
    for keyword in keywords:
        array.add_line(keyword.spelling, comment=evidence(keyword))
    if keywords:
        array.add_line(indent="")
    return array


def write_packs(packs: Sequence[LearnedPack], folder: str | Path, source: str,
                header: Sequence[str] = ()) -> list[Path]:
    """Write `<folder>/<agent>.toml` for every pack (folder created); returns the paths.

    Raises OSError when the folder or a file cannot be written.
    """
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for pack in packs:
        path = out / f"{pack.agent}.toml"
        path.write_text(render_pack(pack, source, header), encoding="utf-8")
        paths.append(path)
    return paths
