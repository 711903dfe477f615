"""txconform serve: the reference broker on Kafka's wire protocol."""
