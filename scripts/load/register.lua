-- wrk script: POST /v1/devices with one pre-signed body per request, from a file of JSON lines
-- written by `herald-dev bench register --write-bodies FILE`. Every body is sent at most once per
-- thread (a replay would be answered 409); run with -t1 so no two threads share a body.
--   wrk -t1 -c64 -d10s --latency -s scripts/load/register.lua http://127.0.0.1:8080 -- bodies.jsonl
-- Requests are formatted once, in init: formatting each one in request() cost wrk about 2 µs of
-- CPU per request, taken from the two cores the server shares with it.
local requests = {}
local index = 0

function init(args)
  local path = args[1] or "bodies.jsonl"
  local headers = { ["Content-Type"] = "application/json" }
  for line in io.lines(path) do
    if #line > 0 then requests[#requests + 1] = wrk.format("POST", "/v1/devices", headers, line) end
  end
end

function request()
  index = index + 1
  if index > #requests then index = 1 end  -- wrapped: later requests are replays (409)
  return requests[index]
end

