"""Text in, text out with an encoder-decoder model: `kiln-run translate` as a class."""

import dataclasses
from typing import List, Optional

from . import _kiln


@dataclasses.dataclass
class Translation:
    source: str  # the text translated
    text: str  # the hypothesis, detokenized (stops at <eos>)
    score: float  # normalized by the length penalty for beam search; greedy: raw_score
    raw_score: float  # sum of the tokens' log-probabilities
    tokens: List[int]  # generated after <bos>, <eos> included when finished
    finished: bool  # ended with <eos> (not cut off at max_length)
    n_best: List["Translation"]  # every finished hypothesis, best first, if asked for


class Translator:
    """Translates text with a compiled encoder-decoder and its vocabulary.

    model and weights are kiln.Model / kiln.Weights objects or paths; config is the
    model's config.json (special ids, lengths, vocab_file), vocab a vocabulary file that
    replaces the config's. Decodes with the model's KV caches (decode_start and
    decode_step) when it has them and cache is true, else re-decodes whole prefixes.
    """

    def __init__(self, model, weights, config, vocab=None, cache=True):
        vocabulary = _kiln.Vocabulary.from_config(config)
        if vocab is not None:
            v = vocabulary
            vocabulary = _kiln.Vocabulary.load(
                vocab, pad_id=v.pad_id, bos_id=v.bos_id, eos_id=v.eos_id,
                unk_id=v.unk_id, max_source_len=v.max_source_len,
                max_target_len=v.max_target_len)
        self.vocabulary = vocabulary
        self.model = model if isinstance(model, _kiln.Model) else _kiln.Model(model)
        self.weights = (weights if isinstance(weights, _kiln.Weights)
                        else _kiln.Weights(self.model, weights))
        entries = [e.name for e in self.model.entries]
        self.cached = cache and _kiln.KVCacheDecoder.DEFAULT_STEP in entries
        decoder = _kiln.KVCacheDecoder if self.cached else _kiln.PrefixDecoder
        self.decoder = decoder(self.model, self.weights, vocabulary.pad_id)

    def translate(self, texts: List[str], beam_size: Optional[int] = None,
                  alpha: float = 0.6, max_length: Optional[int] = None,
                  n_best: bool = False,
                  allow_over_length: bool = False) -> List[Translation]:
        """Translates texts in one batch, greedy or with a beam search of beam_size.

        alpha is the GNMT length penalty of beam search; max_length the most tokens
        generated, <eos> included (default: the config's max_target_len). Every text is
        tokenized before the search starts, so a bad one fails before any model work
        (InvalidArgumentError naming the character and its position).
        """
        options = _kiln.GenerateOptions.for_vocabulary(self.vocabulary)
        if beam_size is not None:
            options.search = "beam"
            options.beam_size = beam_size
            options.alpha = alpha
        if max_length is not None:
            options.max_length = max_length
        options.n_best = n_best
        sources = [self.vocabulary.encode_source(t, allow_over_length) for t in texts]
        results = _kiln.generate(self.decoder, sources, options)
        return [self._translation(text, r.best, [self._translation(text, h, [])
                                                 for h in r.n_best])
                for text, r in zip(texts, results)]

    def _translation(self, source, hypothesis, n_best):
        return Translation(source, self.vocabulary.decode_target(hypothesis.tokens),
                           hypothesis.score, hypothesis.raw_score,
                           list(hypothesis.tokens), hypothesis.finished, n_best)
