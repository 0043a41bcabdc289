"""Embedders (the bundled lexical one and those chosen by a spec string) and the embedding profiles
that say which node types and fields each embeds."""
