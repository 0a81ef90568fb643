package main

// serveEnv documents the environment `toolrag serve` reads (README,
// Configuration). TestServeHelpListsEnv checks it against the variables the
// code reads.
const serveEnv = `Configuration files (in MCP_GATEWAY_CONFIG_DIR): registry.yaml (upstream servers), keys.yaml (API keys
and the optional oauth: section); ` + "`make run`" + ` copies the examples on first run.

Environment variables (all optional; defaults in brackets):
  MCP_GATEWAY_CONFIG_DIR                 YAML directory [./config]
  MCP_GATEWAY_REGISTRY, MCP_GATEWAY_REGISTRY_GENERATED, MCP_GATEWAY_KEYS
                                         file paths, absolute [in the config dir]
  MCP_GATEWAY_HOST, MCP_GATEWAY_PORT     listen address [127.0.0.1, 8765]
  MCP_GATEWAY_MCP_PATH                   MCP endpoint path [/mcp]
  MCP_GATEWAY_PUBLIC_URL                 the gateway's public base URL, scheme://host[:port], named in the OAuth
                                         metadata, connect links and callbacks [the request's host]
  MCP_GATEWAY_UPSTREAM_TIMEOUT, MCP_GATEWAY_UPSTREAM_CONNECT_TIMEOUT
                                         per-call and connect timeouts, seconds [60, 20]
  MCP_GATEWAY_STDIO_POOL_SIZE, MCP_GATEWAY_STDIO_IDLE_TIMEOUT
                                         stdio processes per server; idle stop, seconds [2, 300]
  MCP_GATEWAY_MAX_BODY_BYTES             request body limit of /mcp and /tool-rag/*, HTTP 413 above [4194304]
  MCP_GATEWAY_MAX_RESULT_BYTES           inline result limit: a larger result is stored and answered as a
                                         preview and a resource_link [8388608]
  MCP_GATEWAY_MAX_SPILL_BYTES            largest upstream result taken and stored; 0 = refuse results over
                                         MCP_GATEWAY_MAX_RESULT_BYTES [134217728]
  MCP_GATEWAY_RESULTS_DIR                where stored results are kept [next to TOOL_RAG_DB]
  MCP_GATEWAY_RESULT_TTL, MCP_GATEWAY_RESULT_URL_TTL
                                         seconds a stored result stays readable; a signed download URL is
                                         valid [3600, 900]
  MCP_GATEWAY_RESULT_PREVIEW_BYTES       text of a stored result kept inline as its preview [2048]
  MCP_GATEWAY_SESSION_TTL                MCP session lifetime, seconds [86400]
  TOOL_RAG_STATE_KEY                     secret sealing the requestState of input_required answers; set the
                                         same on every instance behind one address [a random key per process]
  MCP_GATEWAY_INPUT_TTL                  seconds a 2026-07-28 client has to answer an input_required result [600]
  MCP_GATEWAY_CONFIG_POLL                seconds between checks of keys.yaml and the registry for changes,
                                         0 = only on SIGHUP [2]
  MCP_GATEWAY_AUTH_FAILURE_BURST, MCP_GATEWAY_AUTH_FAILURE_RATE
                                         failed authentications per client address before 429; refill
                                         per second, burst 0 = no limit [30, 0.5]
  MCP_GATEWAY_TRUST_FORWARDED_FOR        1: count failures under the last X-Forwarded-For entry (behind
                                         your own reverse proxy only) [0]
  TOOL_RAG_MAX_PARALLEL                  run_tools concurrency cap [8]
  TOOL_RAG_DB, TOOL_RAG_INDEX_DIR        SQLite catalog; index folder [tool_registry.db, next to it]
  TOOL_RAG_STARTUP_REINDEX               full | incremental | off [full]
  TOOL_RAG_RESYNC_INTERVAL               seconds between background re-syncs, 0 = off [0]
  TOOL_RAG_SYNC_PARALLEL, TOOL_RAG_SYNC_TIMEOUT
                                         servers synced at once; seconds per server [16, 30]
  TOOL_RAG_MAX_TOOLS_PER_SERVER, TOOL_RAG_MAX_TOOL_PAGES
                                         tools kept and tools/list pages followed per upstream [2000, 100]
  TOOL_RAG_CONSOLE_PATH                  operator console path, off = none [/console]
  TOOL_RAG_HEALTHCHECK_INTERVAL, TOOL_RAG_HEALTHCHECK_TIMEOUT
                                         upstream probes, seconds [30, 5]
  TOOL_RAG_SHORTLIST_DESC_CHARS          description cap in find_tools, 0 = full [300]
  TOOL_RAG_CALL_SEQUENCES                1: count "called after, in the same session" tool pairs for
                                         related (tool ids and a day only; docs/retrieval.md) [0]
  TOOL_RAG_CALLSEQ_MIN_PRINCIPALS, TOOL_RAG_CALLSEQ_PRINCIPAL_DAY_CAP
                                         distinct keys before a pair counts; one key's count per pair a day [3, 1]
  TOOL_RAG_WITHOUT_AUTH                  1 disables authentication (loopback MCP_GATEWAY_HOST only) [0]
  TOOL_RAG_UPSTREAM_ENV                  comma-separated variables registry headers may read besides
                                         TOOLRAG_UPSTREAM_* (docs/upstreams.md) []
  TOOL_RAG_VAULT_KEY_FILE, TOOL_RAG_VAULT_DB
                                         per-user upstream credentials: key file (0600) and SQLite file
                                         [vault.key, upstream_grants.db next to TOOL_RAG_DB] (docs/upstream-auth.md)
  TOOL_RAG_CONNECT_LINK_TTL              seconds a connect link lives [600]
  TOOLRAG_LOG_LEVEL, TOOLRAG_LOG_FORMAT  debug|info|warn|error; text|json [info, text]
  TOOL_RAG_EMBEDDER                      builtin | url | bedrock | model2vec [builtin] (docs/embedders.md)
    url:       TOOL_RAG_EMBED_URL, TOOL_RAG_EMBED_MODEL, TOOL_RAG_EMBED_API_KEY, TOOL_RAG_EMBED_DIM,
               TOOL_RAG_EMBED_BATCH, TOOL_RAG_EMBED_TIMEOUT, TOOL_RAG_EMBED_QUERY_INSTRUCTION
    bedrock:   TOOL_RAG_BEDROCK_MODEL_ID, TOOL_RAG_BEDROCK_DIM, TOOL_RAG_BEDROCK_CONCURRENCY
    model2vec: TOOL_RAG_MODEL2VEC_PATH
  TOOL_RAG_RERANKER                      off | bedrock | url [off]
    TOOL_RAG_RERANKER_URL, TOOL_RAG_RERANKER_MODEL, TOOL_RAG_RERANKER_API_KEY, TOOL_RAG_RERANKER_FORMAT,
    TOOL_RAG_RERANKER_TIMEOUT, TOOL_RAG_RERANKER_BEDROCK_MODEL
  TOOL_RAG_PLANNER                       off | llm: the plan meta-tool [off]
    TOOL_RAG_PLANNER_URL, TOOL_RAG_PLANNER_MODEL, TOOL_RAG_PLANNER_API_KEY, TOOL_RAG_PLANNER_TEMPERATURE,
    TOOL_RAG_PLANNER_TIMEOUT
`

// serveAbout is the -h of `toolrag serve`.
const serveAbout = "Runs the gateway: MCP on MCP_GATEWAY_MCP_PATH, the REST API under /tool-rag/, /health.\n\n" + serveEnv
