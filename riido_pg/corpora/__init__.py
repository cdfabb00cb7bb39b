"""Corpus builders: evaluation corpora made from public sources, kept out of the
runtime path (ranking, loading and the command line's other commands never import
them). ``docproxy`` builds the pinned documentation-proxy corpus (README "The
documentation-proxy corpus"); ``history`` builds questions from a git repository's
commit subjects, whose targets are the functions each commit changed."""
