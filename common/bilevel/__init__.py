"""Code the bilevel-hypercleaning methods and baselines share: the generator protocol (:mod:`.program`)."""
