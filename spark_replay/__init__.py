"""PySpark jobs that check large production traces for conformance. Populated by the Spark replay issue."""
