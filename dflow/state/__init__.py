"""Variables, initializers and variable scopes (TF1's state API).

Semantics of reads and assigns within a run: dflow/schedule/state.py.
"""
