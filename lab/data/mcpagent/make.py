#!/usr/bin/env python3
"""Writes tools.jsonl and pairs.jsonl of the mcpagent training dataset
(README.md), next to this script, from:

- the TRAIN servers of ../shared/train/docker_mcp_registry (TRAIN_SERVERS),
- fs.jsonl, mem.jsonl and refservers.jsonl (reference servers; one tool a
  line: {"server", "name", "description", "params": {name: description}}),
- every servers/<server>.jsonl (one tool a line: {"name", "description",
  "input_schema"}; the server is the file name; it replaces a built-in
  catalog of the same server),
- the queries of every queries*.jsonl file in this folder (one record a
  line: {"server", "tool", "passes": {"1": [queries], ...}} for a tool's
  single-capability queries, {"task", "tools": [[server, tool], ...]} for
  a multi-tool task; README.md).

    python3 make.py ../../../../shared/train
"""
import glob, json, os, sys
here = os.path.dirname(os.path.abspath(__file__))

TRAIN_SERVERS = {"dotnet-types-explorer", "keboola-mcp", "maestro-mcp-server", "neo4j", "notion-remote",
                 "okta-mcp-server", "sentry-remote", "simplechecklist", "sonarqube", "stripe-remote"}
if len(sys.argv) != 2:
    raise SystemExit("usage: make.py <shared/train folder>")
train = sys.argv[1]
tools = {}
# A captured catalog in servers/ replaces a built-in one of the same server
# (a real tools/list beats one written from a README).
harvested = {os.path.basename(p)[:-len(".jsonl")]: p
             for p in sorted(glob.glob(os.path.join(here, "servers", "*.jsonl")))}
replaced = set()
def add(server, name, desc, schema, source):
    if server in harvested and not source.startswith(os.path.join(here, "servers")):
        if server not in replaced:
            replaced.add(server)
            print("servers/%s.jsonl replaces the %s catalog of %s" % (server, source, server))
        return
    tid = "mcpagent__%s__%s" % (server, name)
    if tid in tools:
        raise SystemExit("%s: tool %s is defined twice" % (source, tid))
    tools[tid] = {"id": tid, "server": server, "name": name, "description": desc or "", "input_schema": schema}
def jsonl(path):
    with open(path) as f:
        for n, l in enumerate(f, 1):
            if l.strip():
                try:
                    yield json.loads(l)
                except ValueError as e:
                    raise SystemExit("%s:%d: %s" % (path, n, e))
docker = list(jsonl(os.path.join(train, "docker_mcp_registry", "tools.jsonl")))
dev = {t["server"] for t in docker} - TRAIN_SERVERS  # the real-MCP DEV servers: never trained on
for server in harvested:
    if server in dev:
        raise SystemExit("servers/%s.jsonl: %s is a DEV server of lab/eval/testdata/realmcp" % (server, server))
for t in docker:
    if t["server"] in TRAIN_SERVERS:
        add(t["server"], t["name"], t.get("description"), t.get("input_schema"), "docker_mcp_registry")
for server, path in (("filesystem", "fs.jsonl"), ("memory", "mem.jsonl")):
    for t in jsonl(os.path.join(here, path)):
        add(server, t["name"], t["description"], t.get("input_schema"), path)
for t in jsonl(os.path.join(here, "refservers.jsonl")):
    props = {k: {"type": "string", "description": v} for k, v in t["params"].items()}
    add(t["server"], t["name"], t["description"], {"type": "object", "properties": props}, "refservers.jsonl")
for server, path in harvested.items():
    for t in jsonl(path):
        if not isinstance(t, dict) or not t.get("name"):
            raise SystemExit("%s: a line without a tool name: %r" % (path, t))
        add(server, t["name"], t.get("description"), t.get("input_schema"), path)

pairs, seen = [], set()
def pair(q, ids, source):
    for i in ids:
        if i not in tools:
            raise SystemExit("%s: unknown tool %s (query %r)" % (source, i, q))
    key = (" ".join(q.lower().split()), tuple(sorted(ids)))
    if key in seen:
        return  # the same query and labels written twice
    seen.add(key)
    pairs.append({"query": q, "tool_ids": ids})
names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(here, "queries*.jsonl")))
for name in names:
    # Each tool's queries (pass by pass) in file order, then the tasks.
    tasks = []
    for n, r in enumerate(jsonl(os.path.join(here, name)), 1):
        if "tool" in r:
            for p in sorted(r["passes"], key=int):
                for q in r["passes"][p]:
                    pair(q, ["mcpagent__%s__%s" % (r["server"], r["tool"])], name)
        elif "task" in r:
            tasks.append(r)
        else:
            raise SystemExit("%s:%d: neither a tool's queries nor a task: %r" % (name, n, r))
    for t in tasks:
        pair(t["task"], ["mcpagent__%s__%s" % tuple(x) for x in t["tools"]], name)
with open(os.path.join(here, "tools.jsonl"), "w") as f:
    for tid in sorted(tools):
        f.write(json.dumps(tools[tid]) + "\n")
with open(os.path.join(here, "pairs.jsonl"), "w") as f:
    for p in pairs:
        f.write(json.dumps(p) + "\n")
print(len(tools), "tools,", len(pairs), "pairs (from %s)" % ", ".join(names))
