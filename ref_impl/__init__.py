"""The reference broker (pure Python, deterministic). Populated by the Kafka reference-broker issue."""
