"""Text in data files is what it looks like: every string (and key) of a template, lexicon, identity, harness,
mitigation or news file is checked before it is used, so no look-alike can slip past the validators that compare
words (the corpus validator's disjoint identity forms, the labelers' word lists).

Refused, with the file, line and field named:

- format characters (Unicode category Cf: zero-width spaces and joiners, bidi marks, embeddings, overrides and
  isolates, soft hyphens, word joiners, byte-order marks) and control characters other than newline and tab;
- text that NFKC normalisation changes (fullwidth and other compatibility letters, ligatures, unnormalised
  combining sequences): data files hold NFKC text, which is what a reader and a comparison both see;
- a word mixing letters of two scripts (a Cyrillic `М` in `Мuslim`, a Greek `ο` in `Christian`): the confusables
  that pass for another word.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from mirage.errors import DataError

_WORD = re.compile(r"[^\W\d_]+")


#: Scripts written together within one word (Japanese mixes kana and kanji).
_SAME = {"HIRAGANA": "JAPANESE", "KATAKANA": "JAPANESE", "KATAKANA-HIRAGANA": "JAPANESE", "CJK": "JAPANESE"}


def _script(c: str) -> str:
    name = unicodedata.name(c, "UNKNOWN").split(" ")[0]
    return _SAME.get(name, name)


def problem(s: str) -> str | None:
    """What is wrong with a string of a data file, or None."""
    for i, c in enumerate(s):
        cat = unicodedata.category(c)
        if cat == "Cf" or (cat == "Cc" and c not in "\n\t"):
            what = "a format character" if cat == "Cf" else "a control character"
            return f"{what} U+{ord(c):04X} ({unicodedata.name(c, 'unnamed').lower()}) at character {i + 1}"
    if (n := unicodedata.normalize("NFKC", s)) != s:
        i = next((k for k, (a, b) in enumerate(zip(s, n)) if a != b), min(len(s), len(n)))
        c = s[i] if i < len(s) else s[-1]
        return (f"not NFKC-normalised text: U+{ord(c):04X} ({unicodedata.name(c, 'unnamed').lower()}) at character "
                f"{i + 1}; write the plain character")
    for m in _WORD.finditer(s):
        scripts = sorted({_script(c) for c in m.group(0)})
        if len(scripts) > 1:
            return (f"the word {m.group(0)!r} mixes {' and '.join(s.lower() for s in scripts)} letters "
                    "(a look-alike of another word?)")
    return None


def _strings(obj: Any, path: str) -> Iterator[tuple[str, str]]:
    """(field path, string) of every key and string value of a JSON-like value."""
    if isinstance(obj, str):
        yield path, obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            sub = f"{path}.{k}" if path else str(k)
            if isinstance(k, str):
                yield sub, k
            yield from _strings(v, sub)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from _strings(v, f"{path}.{i}" if path else str(i))


def check_row(row: Any, where: str) -> None:
    """Check every key and string of one parsed row; `where` is `file:line`."""
    for field, s in _strings(row, ""):
        if why := problem(s):
            raise DataError(f"{where}: field {field[:120]}: {why}")


def check_yaml(text: str, where: str) -> None:
    """Check every key and scalar of a YAML document (already loaded within bounds), naming its line and field."""
    import yaml

    root = yaml.compose(text, Loader=yaml.SafeLoader)
    seen: set[int] = set()
    stack: list[tuple[Any, str]] = [(root, "")] if root is not None else []
    while stack:
        node, path = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            if why := problem(node.value):
                raise DataError(f"{where}:{node.start_mark.line + 1}: field {path[:120] or '(top level)'}: {why}")
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((child, f"{path}.{i}" if path else str(i)) for i, child in reversed(list(enumerate(node.value))))
        elif isinstance(node, yaml.MappingNode):
            for key, value in reversed(node.value):
                name = key.value if isinstance(key, yaml.ScalarNode) else "?"
                sub = f"{path}.{name}" if path else str(name)
                stack.extend([(value, sub), (key, sub)])
