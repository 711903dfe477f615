"""Models and what checking them gives: the registry of models with their expected outcomes
(``registry``), the task and result types every engine shares (``result``), and counterexamples as
numbered steps and Mermaid diagrams (``counterexample``) and as ITF JSON (``itf``), the trace format
Apalache writes and txconform emits."""
