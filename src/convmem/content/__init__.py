"""Message content: parts (reading, counting by the providers' rules, each format's shape), token
counters with tiktoken's files (``tokenizers/``), and the labelled, quoted data blocks."""
