"""Checks a `critsec run --json` file against JMH's -rf json layout and the smoke run's facts."""
import json
import sys

path = sys.argv[1]
entries = json.load(open(path))
assert isinstance(entries, list) and entries, "expected a non-empty JSON array"
required = ["jmhVersion", "benchmark", "mode", "threads", "forks", "jvm", "jvmArgs", "jdkVersion",
            "vmName", "vmVersion", "warmupIterations", "warmupTime", "warmupBatchSize",
            "measurementIterations", "measurementTime", "measurementBatchSize", "primaryMetric",
            "secondaryMetrics"]
for e in entries:
    missing = [k for k in required if k not in e]
    assert not missing, f"{e.get('benchmark')}: missing {missing}"
    pm = e["primaryMetric"]
    for k in ["score", "scoreError", "scoreConfidence", "scorePercentiles", "scoreUnit", "rawData"]:
        assert k in pm, f"{e['benchmark']}: primaryMetric lacks {k}"
    assert pm["score"] > 0, f"{e['benchmark']}: score {pm['score']}"
    assert len(pm["rawData"]) == e["forks"] and len(pm["rawData"][0]) == e["measurementIterations"]
    assert "cpu.utilisation" in e["secondaryMetrics"]

# The fork environment reached the measuring process: backtrace=1 saw RUST_BACKTRACE set.
env = {e["params"]["backtrace"]: e["secondaryMetrics"]["env.rust_backtrace"]["score"]
       for e in entries if e["benchmark"] == "harness.env"}
assert env == {"0": 0.0, "1": 1.0}, f"fork environment not applied: {env}"

meta = json.load(open(path[: -len(".json")] + ".meta.json"))
for k in ["machine", "git_commit", "hazards", "settings", "benchmarks"]:
    assert k in meta, f"meta lacks {k}"
print(f"{path}: {len(entries)} JMH entries OK; fork environment applied: {env}")
