"""Tables of a user: the fitted preprocessing stored with a model (:mod:`.preprocessing`), a column's kind and
values (:mod:`.columns`), categorical columns coded so that priors can name them (:mod:`.categories`: reference
levels, ordered levels)."""
