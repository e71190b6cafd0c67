"""Input readers: sniff formats by magic bytes and turn records into documents."""
