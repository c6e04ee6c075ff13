"""Standard datasets out and in: implemented conversations as ragas, DeepEval, promptfoo or JSONL
datasets, and ragas or DeepEval datasets as hand-written specs."""
