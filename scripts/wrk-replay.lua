-- Replays pre-signed proposals with wrk, each request once (fresh webhook-ids):
--   airlock-load --emit FILE --total N --mix realistic --agent AGENT --secret …
--   wrk -t2 -c64 -d10s -s scripts/wrk-replay.lua http://127.0.0.1:PORT -- FILE AGENT 2
-- FILE lines: webhook-id TAB timestamp TAB signature TAB body; the last argument is the
-- thread count (-t). Thread k of T sends lines k, k+T, k+2T, …; a thread that runs out
-- stops, so no request is ever sent twice.

local counter = 0

function setup(thread)
  thread:set("index", counter)
  counter = counter + 1
end

function init(args)
  file, agent, threads = args[1], args[2], tonumber(args[3] or "1")
  requests = nil
end

local function load()
  local index = wrk.thread:get("index") or 0
  requests = {}
  local n = 0
  for line in io.lines(file) do
    if n % threads == index then
      local id, ts, sig, body = line:match("^([^\t]+)\t([^\t]+)\t([^\t]+)\t(.*)$")
      requests[#requests + 1] = wrk.format("POST", "/api/v1/tool-calls", {
        ["Content-Type"] = "application/json",
        ["airlock-agent"] = agent,
        ["webhook-id"] = id,
        ["webhook-timestamp"] = ts,
        ["webhook-signature"] = sig,
      }, body)
    end
    n = n + 1
  end
  next_request = 1
end

function request()
  if requests == nil then
    load()
  end
  local r = requests[next_request]
  if r == nil then
    wrk.thread:stop()
    return requests[#requests]
  end
  next_request = next_request + 1
  return r
end
