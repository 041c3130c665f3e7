"""The store: its client, collections and indexes, and the local FerretDB's SQLite internals and trimming."""
