#!/usr/bin/env python3
"""Writes tools.jsonl and pairs.jsonl of the mcpagent training dataset
(README.md), next to this script, from:

- the TRAIN servers of ../shared/train/docker_mcp_registry (TRAIN_SERVERS),
- fs.jsonl, mem.jsonl and refservers.py (reference servers),
- every servers/<server>.jsonl (one tool a line: {"name", "description",
  "input_schema"}; the server is the file name; it replaces a built-in
  catalog of the same server),
- the queries of every queries*.py module in this folder (each has
  Q = {server: {tool: [queries]}} and TASKS = [(query, [(server, tool)])]).

    python3 make.py ../../../../shared/train
"""
import glob, importlib, json, os, sys
sys.dont_write_bytecode = True  # no __pycache__ in the repo
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import refservers

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
for server, ts in refservers.REF.items():
    for name, desc, params in ts:
        props = {k: {"type": "string", "description": v} for k, v in params.items()}
        add(server, name, desc, {"type": "object", "properties": props}, "refservers.py")
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
mods = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(here, "queries*.py")))
for name in mods:
    m = importlib.import_module(name)
    for server, byTool in getattr(m, "Q", {}).items():
        for tool, qs in byTool.items():
            for q in qs:
                pair(q, ["mcpagent__%s__%s" % (server, tool)], name + ".py")
    for q, needed in getattr(m, "TASKS", []):
        pair(q, ["mcpagent__%s__%s" % x for x in needed], name + ".py")
with open(os.path.join(here, "tools.jsonl"), "w") as f:
    for tid in sorted(tools):
        f.write(json.dumps(tools[tid]) + "\n")
with open(os.path.join(here, "pairs.jsonl"), "w") as f:
    for p in pairs:
        f.write(json.dumps(p) + "\n")
print(len(tools), "tools,", len(pairs), "pairs (from %s)" % ", ".join(m + ".py" for m in mods))
