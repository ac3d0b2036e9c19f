-- wrk script: POST /v1/devices with one pre-signed body per request, from a file of JSON lines
-- written by `herald bench register --write-bodies FILE`. Every body is sent at most once per
-- thread (a replay would be answered 409); run with -t1 so no two threads share a body.
--   wrk -t1 -c64 -d10s --latency -s scripts/load/register.lua http://127.0.0.1:8080 -- bodies.jsonl
local bodies = {}
local index = 0

function init(args)
  local path = args[1] or "bodies.jsonl"
  for line in io.lines(path) do
    if #line > 0 then bodies[#bodies + 1] = line end
  end
  wrk.method = "POST"
  wrk.path = "/v1/devices"
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  index = index + 1
  if index > #bodies then index = 1 end  -- wrapped: later requests are replays (409)
  return wrk.format(nil, nil, nil, bodies[index])
end

