"""The bridge to the model checkers (TLC and Apalache), counterexample rendering, and the txconform CLI."""
