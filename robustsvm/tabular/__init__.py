"""Tables of a user: categorical columns coded so that priors can name them (reference levels, ordered levels)."""
