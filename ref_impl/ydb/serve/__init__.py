"""``txconform serve --protocol ydb``: the YDB reference engine behind YDB's gRPC API (docs/serve-ydb.md)."""
