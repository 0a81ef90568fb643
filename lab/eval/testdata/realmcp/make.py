#!/usr/bin/env python3
"""Writes queries.jsonl (task mode) and tasks.jsonl (agent mode) of the
real-MCP DEV set from dev_docker.jsonl, dev_agent_tt.jsonl (README.md) and
the tooltalk / taubench pairs in ../shared/train. Run from this directory:

    python3 make.py ../../../../../shared/train

Tool ids are the catalog ids eval.RealMCPCatalog gives the tools:
<server>__<name> with server = the docker server, tooltalk.<server> or
taubench.<domain>. Stdlib only; the output is deterministic.
"""
import json, sys, os, hashlib

train = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))

def jsonl(path):
    return [json.loads(l) for l in open(path)]

def load(ds):
    return jsonl(os.path.join(train, ds, "tools.jsonl"))

# dev_docker.jsonl: {"server", "query", "tools": [names]} a single-capability
# query, {"task", "queries", "tools": [[server, name]]} a task.
# dev_agent_tt.jsonl: {"set", "prefix", "queries"}, the agent queries of the
# tooltalk or taubench task whose text starts with prefix.
docker = jsonl(os.path.join(here, "dev_docker.jsonl"))
agent = jsonl(os.path.join(here, "dev_agent_tt.jsonl"))
TOOLTALK = [(a["prefix"], a["queries"]) for a in agent if a["set"] == "tooltalk"]
TAUBENCH = [(a["prefix"], a["queries"]) for a in agent if a["set"] == "taubench"]

def catalog_id(ds, t):
    if ds == "docker_mcp_registry":
        return t["server"] + "__" + t["name"]
    if ds == "tooltalk":
        return "tooltalk." + t["server"] + "__" + t["name"]
    return "taubench." + t["server"] + "__" + t["name"]

ids = {}
for ds in ("docker_mcp_registry", "tooltalk", "taubench"):
    for t in load(ds):
        ids[t["id"]] = catalog_id(ds, t)
known = set(ids.values())

def check(x):
    if x not in known:
        raise SystemExit("unknown tool " + x)
    return x

queries, tasks = [], []
n = 0
for d in docker:
    if "query" in d:
        n += 1
        queries.append({"id": "dk%03d" % n, "query": d["query"], "relevant": [check(d["server"] + "__" + x) for x in d["tools"]], "set": "docker_mcp_registry"})
for i, d in enumerate(d for d in docker if "task" in d):
    r = [check(s + "__" + x) for s, x in d["tools"]]
    queries.append({"id": "dkt%02d" % (i + 1), "query": d["task"], "relevant": r, "set": "docker_tasks"})
    tasks.append({"id": "dkt%02d" % (i + 1), "task": d["task"], "queries": d["queries"], "relevant": r, "set": "docker_tasks"})

def pairs(ds):
    return jsonl(os.path.join(train, ds, "pairs.jsonl"))

for i, p in enumerate(x for x in pairs("tooltalk") if x["query_style"] == "first_user_turn"):
    r = sorted(set(ids[t] for t in p["tool_ids"]))
    qid = "tt%02d" % (i + 1)
    queries.append({"id": qid, "query": p["query"], "relevant": r, "set": "tooltalk"})
    aq = next((v for k, v in TOOLTALK if p["query"].startswith(k.strip())), None)
    if aq:
        tasks.append({"id": qid, "task": p["query"], "queries": aq, "relevant": r, "set": "tooltalk"})

def tau_key(q):
    best = None
    for k, v in TAUBENCH:
        if q.startswith(k) and (best is None or len(k) > len(best[0])):
            best = (k, v)
    return best[1] if best else None

# taubench: the 19 tasks_dev tasks (with agent queries) and 61 of tasks_test
# picked by the SHA-256 of their text (80 task queries).
tau = [p for p in pairs("taubench") if p["split"] == "tasks_dev"]
test = sorted((p for p in pairs("taubench") if p["split"] == "tasks_test"), key=lambda p: hashlib.sha256(p["query"].encode()).hexdigest())
tau += test[:61]
for i, p in enumerate(tau):
    r = sorted(set(ids[t] for t in p["tool_ids"]))
    qid = "tb%02d" % (i + 1)
    queries.append({"id": qid, "query": p["query"], "relevant": r, "set": "taubench"})
    if p["split"] == "tasks_dev":
        aq = tau_key(p["query"])
        if not aq:
            raise SystemExit("no agent queries for " + p["query"][:80])
        tasks.append({"id": qid, "task": p["query"], "queries": aq, "relevant": r, "set": "taubench"})

with open("queries.jsonl", "w") as f:
    for q in queries:
        f.write(json.dumps(q) + "\n")
with open("tasks.jsonl", "w") as f:
    for t in tasks:
        f.write(json.dumps(t) + "\n")
print(len(queries), "queries,", len(tasks), "tasks")
