#!/usr/bin/env python3
"""Writes tools.jsonl and pairs.jsonl of the mcpagent training dataset
(README.md) from queries.py, refservers.py, fs.jsonl, mem.jsonl and the
TRAIN servers of ../shared/train/docker_mcp_registry:

    python3 make.py ../../../../shared/train
"""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import queries, refservers

TRAIN_SERVERS = {"dotnet-types-explorer", "keboola-mcp", "maestro-mcp-server", "neo4j", "notion-remote",
                 "okta-mcp-server", "sentry-remote", "simplechecklist", "sonarqube", "stripe-remote"}
train = sys.argv[1]
tools = {}
def add(server, name, desc, schema):
    tid = "mcpagent__%s__%s" % (server, name)
    tools[tid] = {"id": tid, "server": server, "name": name, "description": desc or "", "input_schema": schema}
for l in open(os.path.join(train, "docker_mcp_registry", "tools.jsonl")):
    t = json.loads(l)
    if t["server"] in TRAIN_SERVERS:
        add(t["server"], t["name"], t.get("description"), t.get("input_schema"))
for server, path in (("filesystem", "fs.jsonl"), ("memory", "mem.jsonl")):
    for l in open(path):
        t = json.loads(l)
        add(server, t["name"], t["description"], t.get("input_schema"))
for server, ts in refservers.REF.items():
    for name, desc, params in ts:
        props = {k: {"type": "string", "description": v} for k, v in params.items()}
        add(server, name, desc, {"type": "object", "properties": props})
pairs = []
for server, byTool in queries.Q.items():
    for name, qs in byTool.items():
        tid = "mcpagent__%s__%s" % (server, name)
        if tid not in tools:
            raise SystemExit("unknown tool " + tid)
        for q in qs:
            pairs.append({"query": q, "tool_ids": [tid]})
for q, needed in queries.TASKS:
    ids = ["mcpagent__%s__%s" % x for x in needed]
    for i in ids:
        if i not in tools:
            raise SystemExit("unknown tool " + i)
    pairs.append({"query": q, "tool_ids": ids})
with open("tools.jsonl", "w") as f:
    for tid in sorted(tools):
        f.write(json.dumps(tools[tid]) + "\n")
with open("pairs.jsonl", "w") as f:
    for p in pairs:
        f.write(json.dumps(p) + "\n")
print(len(tools), "tools,", len(pairs), "pairs")
