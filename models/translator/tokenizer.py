"""The translator's vocabulary and tokenization, and the English rules of the task.

One shared vocabulary (vocab.txt, one token per line, id = 0-based line number):

    0 <pad>   1 <bos>   2 <eos>   3 <unk>      special tokens
    4..13     "0".."9"                          source tokens: one per character
    14..      "zero" .. "million"               target tokens: one per word

Source text is split into characters (the digits as written, no separators); target text
is split on whitespace. A character or word not in the vocabulary becomes <unk>.

The task: a number 0 <= n <= MAX_NUMBER written in decimal digits without leading zeros
-> its English words, lowercase, single spaces, no "and", no hyphens, no commas:
    0 -> "zero", 21 -> "twenty one", 100 -> "one hundred", 4096 -> "four thousand
    ninety six", 1000000 -> "one million", 12000345 -> "twelve million three hundred
    forty five".
Each group of three digits (millions, thousands, units) that is not zero is written as
[X "hundred"] [tens-and-units], where tens-and-units is one word below twenty ("seven",
"thirteen") and otherwise the tens word followed by the units word when the units are not
zero ("forty", "forty five"); then the group's scale word ("million", "thousand", none).
"zero" is used only for the number 0 itself.
"""
import os

PAD, BOS, EOS, UNK = 0, 1, 2, 3
SPECIALS = ["<pad>", "<bos>", "<eos>", "<unk>"]
DIGITS = [str(d) for d in range(10)]
ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
        "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
        "seventeen", "eighteen", "nineteen"]
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
        "ninety"]
SCALES = ["hundred", "thousand", "million"]
WORDS = ONES + TENS[2:] + SCALES
TOKENS = SPECIALS + DIGITS + WORDS

MAX_NUMBER = 99_999_999
MAX_SOURCE_LEN = len(str(MAX_NUMBER))  # 8 characters
# The longest translation: "seventy seven million seven hundred seventy seven thousand
# seven hundred seventy seven" = 12 words; with <eos>, 13 target tokens.
MAX_TARGET_WORDS = 12


def _below_thousand(n):
    words = []
    if n >= 100:
        words += [ONES[n // 100], "hundred"]
        n %= 100
    if n >= 20:
        words.append(TENS[n // 10])
        n %= 10
        if n:
            words.append(ONES[n])
    elif n:
        words.append(ONES[n])
    return words


def number_to_words(n):
    """The English words for 0 <= n <= MAX_NUMBER, per the rules above."""
    if not 0 <= n <= MAX_NUMBER:
        raise ValueError(f"{n} is outside 0..{MAX_NUMBER}")
    if n == 0:
        return "zero"
    words = []
    for scale, size in (("million", 10**6), ("thousand", 10**3), (None, 1)):
        group = n // size % 1000
        if group:
            words += _below_thousand(group)
            if scale:
                words.append(scale)
    return " ".join(words)


class Vocab:
    def __init__(self, tokens=TOKENS):
        self.tokens = list(tokens)
        self.ids = {t: i for i, t in enumerate(self.tokens)}
        assert self.tokens[:4] == SPECIALS

    @classmethod
    def load(cls, path=None):
        path = path or os.path.join(os.path.dirname(os.path.abspath(__file__)), "vocab.txt")
        with open(path, encoding="utf-8") as f:
            return cls([line.rstrip("\n") for line in f])

    def save(self, path):
        with open(path, "w", encoding="utf-8") as f:
            for t in self.tokens:
                f.write(t + "\n")

    def __len__(self):
        return len(self.tokens)

    def encode_source(self, text):
        """Characters -> ids (no <bos>/<eos> on the source side)."""
        return [self.ids.get(ch, UNK) for ch in text.strip()]

    def encode_target(self, text):
        """Whitespace-separated words -> ids (no <bos>/<eos> added)."""
        return [self.ids.get(w, UNK) for w in text.split()]

    def decode_target(self, ids):
        """Ids -> words joined by single spaces, stopping at <eos>, skipping <pad>/<bos>."""
        words = []
        for i in ids:
            if i == EOS:
                break
            if i in (PAD, BOS):
                continue
            words.append(self.tokens[i])
        return " ".join(words)
