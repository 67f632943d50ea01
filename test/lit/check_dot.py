#!/usr/bin/env python3
"""Checks that stdin is a Graphviz digraph as Kiln's printer writes it, without Graphviz.

Parses the DOT grammar the printer uses (graph, subgraph, node, edge and attribute
statements; IDs and double-quoted strings) and checks what Graphviz would otherwise get
wrong silently: every node is declared once, before any edge names it (Graphviz would
create a missing node inside whatever subgraph first mentions it), cluster names are
unique, and strings hold no raw control characters. Exits 1 with the reason otherwise.
"""

import re
import sys

PUNCTUATION = {"{", "}", "[", "]", ";", "=", ",", "->"}
TOKEN = re.compile(r'\s*(?:(->|[{}\[\];=,])|("(?:[^"\\]|\\.)*")|([A-Za-z_][A-Za-z0-9_]*|-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)))', re.S)


def tokens(text):
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            return
        match = TOKEN.match(text, pos)
        if not match:
            raise ValueError(f"unexpected text at offset {pos}: {text[pos:pos + 30]!r}")
        punct, string, ident = match.groups()
        if string is not None and any(ord(c) < 0x20 for c in string):
            raise ValueError(f"raw control character in {string!r}")
        yield punct or string or ident
        pos = match.end()


class Checker:
    def __init__(self, text):
        self.toks = list(tokens(text))
        self.pos = 0
        self.nodes = set()
        self.clusters = set()

    def peek(self):
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def take(self, expected=None):
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            raise ValueError(f"expected {expected or 'more input'}, got {tok!r} "
                             f"(token {self.pos})")
        self.pos += 1
        return tok

    def ident(self):
        tok = self.take()
        if tok in PUNCTUATION:
            raise ValueError(f"expected an ID, got {tok!r} (token {self.pos - 1})")
        return tok

    def attributes(self):
        self.take("[")
        while self.peek() != "]":
            self.ident()
            self.take("=")
            self.ident()
            if self.peek() == ",":
                self.take(",")
        self.take("]")

    def statements(self):
        self.take("{")
        while self.peek() != "}":
            self.statement()
            if self.peek() == ";":
                self.take(";")
        self.take("}")

    def statement(self):
        first = self.ident()
        if first == "subgraph":
            name = self.ident()
            if name in self.clusters:
                raise ValueError(f"subgraph {name} declared twice")
            self.clusters.add(name)
            self.statements()
        elif first in ("node", "edge", "graph"):
            self.attributes()
        elif self.peek() == "=":
            self.take("=")
            self.ident()
        elif self.peek() == "->":
            for end in [first] + self.edge_ends():
                if end not in self.nodes:
                    raise ValueError(f"edge names {end}, declared by no node before it")
            if self.peek() == "[":
                self.attributes()
        else:
            if first in self.nodes:
                raise ValueError(f"node {first} declared twice")
            self.nodes.add(first)
            if self.peek() == "[":
                self.attributes()

    def edge_ends(self):
        ends = []
        while self.peek() == "->":
            self.take("->")
            ends.append(self.ident())
        return ends

    def check(self):
        self.take("digraph")
        if self.peek() != "{":
            self.ident()
        self.statements()
        if self.peek() is not None:
            raise ValueError(f"text after the graph: {self.peek()!r}")
        if not self.nodes:
            raise ValueError("the graph has no nodes")


def main():
    try:
        Checker(sys.stdin.read()).check()
    except ValueError as error:
        print(f"check_dot.py: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
