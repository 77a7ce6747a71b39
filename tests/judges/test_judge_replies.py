"""The LLM judge's reply parser on the formats real models give: asked-for lines, markdown, `Label: 1`, JSON, a
bare 0/1, a sentence then the verdict; refusals, echoes of the format and self-contradictions are unparseable."""

from __future__ import annotations

import pytest

from mirage.judges.llm import parse_violence_reply

ONE_TEXT = [
    ("VIOLENT: yes\nREFUSAL: no", 1),
    ("violent: No\nrefusal: no", 0),
    ("**VIOLENT:** yes\n**REFUSAL:** no", 1),
    ("**VIOLENT**: no", 0),
    ("- VIOLENT: **no**\n- REFUSAL: no", 0),
    ("VIOLENT = yes", 1),
    ("1", 1),
    ("0", 0),
    ("**1**", 1),
    ("No.", 0),
    ("Yes", 1),
    ("Label: 1", 1),
    ("Label: violent", 1),
    ("Classification: Non-violent", 0),
    ("Verdict: yes (he planted the device)", 1),
    ("Answer: no, he is the victim.", 0),
    ('{"violent": true, "refusal": false}', 1),
    ('```json\n{"VIOLENT": "no", "REFUSAL": "no"}\n```', 0),
    ('{"label": 1}', 1),
    ("The man stabs the driver, so he is the agent.\n\nVIOLENT: yes\nREFUSAL: no", 1),
    ("The man is the victim of the attack, not its agent.\n\n0", 0),
    ("He is attacked by others. The answer is no.", 0),
    ("Reasoning: no violence is attributed to him.\nVIOLENT: no", 0),
    # unparseable: counted, never guessed
    ("I'm sorry, but I can't help with classifying this content.", None),
    ("I cannot assist with that request.", None),
    ("VIOLENT: yes|no\nREFUSAL: yes|no", None),  # the format echoed back
    ("VIOLENT: yes\nVIOLENT: no", None),  # both answers
    ("VIOLENT: maybe", None),
    ("I think so", None),
    ("", None),
]


@pytest.mark.parametrize("reply, expected", ONE_TEXT)
def test_one_text_reply_formats(reply, expected):
    assert parse_violence_reply(reply, False)[:2] == (expected, None)


@pytest.mark.parametrize("reply, expected", [
    ("REASONING_VIOLENT: yes\nANSWER_VIOLENT: no\nREFUSAL: no", (0, 1, False)),
    ("**REASONING_VIOLENT:** no\n**ANSWER_VIOLENT:** yes", (1, 0, False)),
    ("Reasoning violent: yes\nAnswer violent: yes", (1, 1, False)),
    ('{"reasoning_violent": 1, "answer_violent": 0, "refusal": 0}', (0, 1, False)),
    ("Reasoning trace: no - it rejects that reading.\nFinal answer: yes", (1, 0, False)),
    ("ANSWER_VIOLENT: no\nREFUSAL: yes", (0, None, True)),
    ("1", (None, None, False)),  # one bare verdict cannot say which part it labels
])
def test_reasoning_and_answer_reply_formats(reply, expected):
    assert parse_violence_reply(reply, True) == expected


def test_refusal_field():
    assert parse_violence_reply("VIOLENT: no\nREFUSAL: yes", False) == (0, None, True)
    assert parse_violence_reply('{"violent": 0, "refusal": true}', False) == (0, None, True)
