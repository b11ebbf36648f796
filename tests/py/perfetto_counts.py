"""Loads a Chrome trace-event JSON timeline into Perfetto's trace processor and prints its
slice and flow counts as JSON: `perfetto_counts.py TRACE.json TRACE_PROCESSOR_SHELL`."""
import json
import sys

from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig

tp = TraceProcessor(trace=sys.argv[1], config=TraceProcessorConfig(bin_path=sys.argv[2]))
count = lambda q: next(iter(tp.query(q))).n
print(json.dumps({
    "slices": count("select count(*) as n from slice"),
    "flows": count("select count(*) as n from flow"),
}))
tp.close()
